import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { tempDataDir } from './helpers/data-dir.ts';
import { fakeIssues, sendJson, startFake, startFakeForge } from './helpers/fake-upstreams.ts';
import { newKey, startServer } from './helpers/server.ts';

// The forge client's bounds: `forge.max_bytes` per answer and per listing in
// all (502, read no further), and upstream requests in flight shared by URL
// across listings.

const MAX_BYTES = 1024 * 1024;

async function estateWithForge(t: Parameters<typeof tempDataDir>[0], forge: Record<string, unknown>) {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ forge: { timeout_ms: 5000, ...forge } }));
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  return { get: (route: string) => server.get(route, { 'X-API-Key': key }) };
}

test('forge.max_bytes is validated: a cap below 1 KiB or not an integer is refused', async () => {
  const { parseConfig } = await import('../src/config.ts');
  for (const bad of [0, 512, 1.5, '1MB']) {
    assert.throws(() => parseConfig(JSON.stringify({ forge: { url: 'http://forge:3000', max_bytes: bad } }), 'estate.config.json'), /forge\.max_bytes/);
  }
  const ok = parseConfig(JSON.stringify({ forge: { url: 'http://forge:3000' } }), 'estate.config.json');
  assert.equal(ok.forge?.max_bytes, 16 * 1024 * 1024, 'the default is 16 MiB');
});

test('a listing whose pages add up past forge.max_bytes is 502, and no further page is asked for', async (t) => {
  // Every page is 50 repositories of ~4 KB (~200 KB) and says there is a next one.
  const pad = 'x'.repeat(4000);
  const forge = await startFake(t, (_req, res, seen) => {
    const page = Number(seen.query.get('page'));
    const data = Array.from({ length: 50 }, (_, i) => ({ full_name: `org/r${page}-${i}`, owner: { login: 'org' }, description: pad }));
    sendJson(res, 200, { ok: true, data }, { Link: `<http://forge/api/v1/repos/search?page=${page + 1}>; rel="next"` });
  });
  const estate = await estateWithForge(t, { url: forge.url, max_bytes: MAX_BYTES });
  const r = await estate.get('/forgejo-proxy/repos');
  assert.equal(r.status, 502, r.text);
  assert.match(
    r.json.detail,
    /^the forge at http:\/\/127\.0\.0\.1:\d+ answered pages of \/api\/v1\/repos\/search that add up to more than 1048576 bytes; estate reads at most forge\.max_bytes \(1048576\) per call$/,
  );
  // 1 MiB / ~200 KB: the sixth page passes the cap; none after it is asked for.
  assert.equal(forge.requests.length, 6, `${forge.requests.length} pages asked for`);
});

test('an endless forge answer is cut at forge.max_bytes: 502 before the timeout, the connection closed', async (t) => {
  let closed!: () => void;
  const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
  const chunk = Buffer.alloc(64 * 1024, 'a');
  const forge = await startFake(t, (_req, res) => {
    res.on('close', closed);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"ok":true,"data":["');
    const more = () => {
      while (!res.destroyed && res.write(chunk));
    };
    res.on('drain', more);
    more();
  });
  const estate = await estateWithForge(t, { url: forge.url, max_bytes: MAX_BYTES, timeout_ms: 60_000 });
  const r = await estate.get('/forgejo-proxy/repos');
  assert.equal(r.status, 502, r.text);
  assert.match(r.json.detail, /answered \/api\/v1\/repos\/search with more than 1048576 bytes; estate reads at most forge\.max_bytes \(1048576\) per call$/);
  await connectionClosed; // estate stopped reading and closed the connection (else this waits until the test times out)
});

test('a huge error answer is read only for its message', async (t) => {
  const forge = await startFake(t, (_req, res) => {
    res.writeHead(500, { 'Content-Type': 'text/plain' });
    res.end(`database is down${'!'.repeat(2 * MAX_BYTES)}`);
  });
  const estate = await estateWithForge(t, { url: forge.url, max_bytes: MAX_BYTES });
  const r = await estate.get('/forgejo-proxy/repos');
  assert.equal(r.status, 502, r.text);
  assert.match(r.json.detail, /answered 500 Internal Server Error: database is down!+…$/);
});

test('listings in flight share each upstream request, whatever their limit or the case of owner/repo', async (t) => {
  const issues = fakeIssues(300); // 150 open issues that are not pull requests
  // The first page is held long enough for all three listings to reach estate, however busy the machine; the
  // listings then move in step, each next page asked for at once by all three.
  const forge = await startFakeForge(t, { issues: { 'org/app': issues, 'Org/App': issues }, delayMs: (q) => (q.query.get('page') === '1' ? 3000 : 300) });
  const estate = await estateWithForge(t, { url: forge.url, cache_s: 0, timeout_ms: 30_000 });
  const [a, b, c] = await Promise.all([
    estate.get('/forgejo-proxy/issues/org/app?limit=100'),
    estate.get('/forgejo-proxy/issues/org/app?limit=200'),
    estate.get('/forgejo-proxy/issues/Org/App?limit=200'),
  ]);
  assert.equal(a.status, 200, a.text);
  assert.equal(a.json.count, 100);
  assert.equal(b.json.count, 150);
  assert.equal(c.json.count, 150);
  assert.equal(c.json.repo, 'Org/App', 'each answer names the repository as its caller did');
  const asked = forge.requests.map((q) => `${q.path.toLowerCase()}?${q.query}`);
  assert.deepEqual(asked.filter((u, i) => asked.indexOf(u) !== i), [], 'no upstream URL asked for twice');
  assert.equal(forge.requests.length, 3, 'pages 1 to 3 of the one listing, once each');
});
