import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import path from 'node:path';
import { test } from 'node:test';
import { tempDataDir } from './helpers/data-dir.ts';
import { fakeIssues, refusedUrl, startAnswering, startFake, startFakeForge, startHanging } from './helpers/fake-upstreams.ts';
import { newKey, startServer } from './helpers/server.ts';

/** The forge timeout of the tests where the forge never answers; where it does answer, a generous one. */
const TIMEOUT_MS = 300;
const GENEROUS_MS = 5000;

async function estateWithForge(t: Parameters<typeof tempDataDir>[0], forgeUrl: string | undefined, env: NodeJS.ProcessEnv = {}, timeoutMs = GENEROUS_MS) {
  const dir = await tempDataDir(t);
  const config = forgeUrl ? { forge: { url: forgeUrl, timeout_ms: timeoutMs, cache_s: 30 } } : {};
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify(config));
  const key = await newKey(dir);
  const server = await startServer(t, dir, { env });
  return { dir, server, key, get: (route: string) => server.get(route, { 'X-API-Key': key }) };
}

test('/forgejo-proxy/repos reads every page with the token and enriches each repository', async (t) => {
  const forge = await startFakeForge(t, { repos: 120, token: 's3cret' });
  const estate = await estateWithForge(t, forge.url, { FORGEJO_TOKEN: 's3cret' });
  const r = await estate.get('/forgejo-proxy/repos');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.count, 120);
  assert.equal(r.json.truncated, false);
  assert.deepEqual(
    forge.requests.map((q) => [q.path, q.query.get('page'), q.query.get('limit')]),
    [1, 2, 3].map((p) => ['/api/v1/repos/search', String(p), '50']),
  );
  assert.ok(forge.requests.every((q) => q.authorization === 'token s3cret'));
  assert.deepEqual(r.json.items[10], {
    name: 'org/repo-011',
    owner: 'org',
    description: 'Repository number 11',
    url: `${forge.url}/org/repo-011`,
    open_issues: 0,
    open_pull_requests: 0,
    stars: 10,
    forks: 1,
    language: 'TypeScript',
    archived: true,
    private: false,
    fork: false,
    default_branch: 'main',
    updated_at: '2026-11-01T00:10:00.000Z',
  });
  assert.equal(r.json.items[0].description, null, 'an empty description is null');
});

test('pagination ends at the last page whichever headers the forge sends', async (t) => {
  const cases = [
    { headers: 'both', repos: 120, requests: 3 },
    { headers: 'link', repos: 120, requests: 3 },
    { headers: 'total', repos: 100, requests: 2 },
    { headers: 'none', repos: 120, requests: 3 },
    { headers: 'none', repos: 100, requests: 3 }, // a full last page: one more, empty, page tells
    { headers: 'both', repos: 0, requests: 1 },
  ] as const;
  for (const c of cases) {
    await t.test(`${c.headers} headers, ${c.repos} repositories`, async (t) => {
      const forge = await startFakeForge(t, { repos: c.repos, headers: c.headers });
      const estate = await estateWithForge(t, forge.url);
      const r = await estate.get('/forgejo-proxy/repos');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.count, c.repos);
      assert.equal(new Set(r.json.items.map((i: { name: string }) => i.name)).size, c.repos);
      assert.equal(forge.requests.length, c.requests);
    });
  }
});

test('/forgejo-proxy/issues asks for type=issues and never returns a pull request', async (t) => {
  const issues = { 'org/app': fakeIssues(160) };
  const forge = await startFakeForge(t, { repos: 1, issues });
  const estate = await estateWithForge(t, forge.url);
  const open = fakeIssues(160).filter((i) => !i.pull_request && i.state === 'open');
  const cases: [string, number, (n: number) => boolean][] = [
    ['', 20, (n) => n % 3 !== 0],
    ['?limit=70', 70, (n) => n % 3 !== 0],
    ['?state=closed&limit=1000', 40, (n) => n % 3 === 0],
    ['?state=all&limit=1000', 120, () => true],
  ];
  for (const [query, count, expectedState] of cases) {
    await t.test(query || '(defaults)', async () => {
      const r = await estate.get(`/forgejo-proxy/issues/org/app${query}`);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.count, count);
      assert.equal(r.json.repo, 'org/app');
      for (const issue of r.json.items) {
        assert.notEqual(issue.number % 4, 0, `#${issue.number} is a pull request`);
        assert.ok(expectedState(issue.number), `#${issue.number} has the wrong state`);
      }
      assert.deepEqual(Object.keys(r.json.items[0]).sort(), ['author', 'closed_at', 'comments', 'created_at', 'labels', 'number', 'state', 'title', 'updated_at', 'url']);
    });
  }
  const first = await estate.get('/forgejo-proxy/issues/org/app?limit=3');
  assert.deepEqual(first.json.items.map((i: { number: number }) => i.number), open.slice(0, 3).map((i) => i.number));
  assert.ok(forge.requests.every((q) => q.query.get('type') === 'issues'));
  const seventy = forge.requests.filter((q) => q.query.get('state') === 'open' && q.query.get('limit') === '50');
  assert.deepEqual(seventy.map((q) => q.query.get('page')), ['1', '2'], 'limit=70 reads two pages of 50');
});

test('a forge that ignores type=issues still yields no pull request', async (t) => {
  const forge = await startFakeForge(t, { issues: { 'org/app': fakeIssues(40) }, ignoreType: true });
  const estate = await estateWithForge(t, forge.url);
  const r = await estate.get('/forgejo-proxy/issues/org/app?state=all&limit=100');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.count, 30);
  assert.ok(r.json.items.every((i: { title: string }) => i.title.startsWith('Issue')));
});

test('an unknown repository is 404; names that could escape the upstream path are 422 before any request', async (t) => {
  const forge = await startFakeForge(t, { issues: {} });
  const estate = await estateWithForge(t, forge.url);
  const missing = await estate.get('/forgejo-proxy/issues/org/nope');
  assert.equal(missing.status, 404);
  assert.match(missing.json.detail, /org\/nope was not found on the forge/);
  const before = forge.requests.length;
  // fetch would resolve `..` and `%2e%2e` segments itself: send these raw.
  for (const dots of ['..', '%2e%2e', '.']) {
    await t.test(`raw ${dots}`, async () => {
      const r = await rawGet(estate.server.url, `/forgejo-proxy/issues/org/${dots}`, estate.key);
      assert.equal(r.status, 422);
      assert.deepEqual(JSON.parse(r.text).detail[0].loc, ['path', 'repo']);
    });
  }
  const bad: [string, string][] = [
    ['org%2F..', 'owner'],
    ['a%20b', 'owner'],
    ['org%3Fx%3D1', 'owner'],
    ['x'.repeat(101), 'owner'],
  ];
  for (const [owner, field] of bad) {
    await t.test(owner, async () => {
      const r = await estate.get(`/forgejo-proxy/issues/${owner}/repo`);
      assert.equal(r.status, 422);
      assert.deepEqual(r.json.detail[0].loc, ['path', field]);
      assert.equal(r.json.detail[0].type, 'string_pattern_mismatch');
    });
  }
  const badQuery = await estate.get('/forgejo-proxy/issues/org/app?state=merged&limit=0');
  assert.equal(badQuery.status, 422);
  assert.deepEqual(badQuery.json.detail.map((d: { loc: string[] }) => d.loc), [['query', 'state'], ['query', 'limit']]);
  assert.equal(forge.requests.length, before, 'no invalid name reached the forge');
});

test('a broken forge answers 502/503/504, with a clear detail and never the token', async (t) => {
  // A forge that answers (an error) has the generous timeout, so a busy machine never turns its answer into a 504;
  // one that never finishes its answer has the short one, and an answer at all shows estate gave up on it.
  const cases: { name: string; start: () => Promise<string | undefined>; status: number; detail: RegExp }[] = [
    { name: 'not configured', start: async () => undefined, status: 503, detail: /forge is not configured: add "forge"/ },
    { name: 'down (connection refused)', start: refusedUrl, status: 502, detail: /^the forge at http:\/\/127\.0\.0\.1:\d+ is unreachable: connect ECONNREFUSED/ },
    { name: 'hanging', start: async () => (await startHanging(t)).url, status: 504, detail: /did not answer within 300 ms \(forge\.timeout_ms\)/ },
    { name: '500', start: async () => (await startAnswering(t, 500, { message: 'database is locked' })).url, status: 502, detail: /answered 500 Internal Server Error: database is locked$/ },
    { name: '401', start: async () => (await startAnswering(t, 401, { message: 'token is required' })).url, status: 502, detail: /answered 401 Unauthorized: token is required; check the token in \$FORGEJO_TOKEN/ },
    { name: 'redirect (never followed with the token)', start: async () => (await startAnswering(t, 301)).url, status: 502, detail: /answered 301 Moved Permanently; set forge\.url to the forge's final address$/ },
    { name: 'headers, then a body that never ends', start: async () => (await startTrickling(t)).url, status: 504, detail: /did not answer within 300 ms/ },
  ];
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      const url = await c.start();
      const estate = await estateWithForge(t, url, { FORGEJO_TOKEN: 'sekrit-token' }, c.status === 504 ? TIMEOUT_MS : GENEROUS_MS);
      for (const route of ['/forgejo-proxy/repos', '/forgejo-proxy/issues/org/app']) {
        const r = await estate.get(route);
        assert.equal(r.status, c.status, r.text);
        assert.match(r.json.detail, c.detail);
        assert.doesNotMatch(r.text, /sekrit/);
      }
    });
  }
});

test('a listing as a whole is bounded by three times the timeout, however many pages', async (t) => {
  // Ten pages each answered after 40% of the timeout: every page is in time (with a wide margin on a busy
  // machine), the ten together are not. A listing cut at its budget gets at most 7.5 pages' time.
  const timeoutMs = 1000;
  const forge = await startFakeForge(t, { repos: 500, delayMs: 400 });
  const estate = await estateWithForge(t, forge.url, {}, timeoutMs);
  const r = await estate.get('/forgejo-proxy/repos');
  assert.equal(r.status, 504, r.text);
  assert.match(r.json.detail, /^the forge at http:\/\/127\.0\.0\.1:\d+ did not finish listing within 3000 ms$/);
  assert.ok(forge.requests.length > 1 && forge.requests.length <= 8, `${forge.requests.length} pages asked for`);
});

test('a 401 without a token says which variable to set', async (t) => {
  const forge = await startFakeForge(t, { repos: 3, token: 'right' });
  const estate = await estateWithForge(t, forge.url);
  const r = await estate.get('/forgejo-proxy/repos');
  assert.equal(r.status, 502);
  assert.match(r.json.detail, /answered 401 Unauthorized: token is required; set \$FORGEJO_TOKEN to a forge access token/);
  assert.equal(forge.requests[0]?.authorization, undefined);
});

test('a forge answer that is not a Forgejo listing is 502, not 500', async (t) => {
  for (const [name, body] of [['an object', { hello: 'world' }], ['a string', 'hi']] as const) {
    await t.test(name, async (t) => {
      const upstream = await startAnswering(t, 200, body);
      const estate = await estateWithForge(t, upstream.url);
      const r = await estate.get('/forgejo-proxy/repos');
      assert.equal(r.status, 502);
      assert.match(r.json.detail, /answered \/repos\/search with a body that is not a list; is forge\.url a Forgejo or Gitea server\?/);
    });
  }
});

test('forge answers are cached for cache_s and concurrent calls share one upstream request', async (t) => {
  const forge = await startFakeForge(t, { repos: 10, issues: { 'org/app': fakeIssues(10) } });
  const estate = await estateWithForge(t, forge.url);
  const answers = await Promise.all(Array.from({ length: 5 }, () => estate.get('/forgejo-proxy/repos')));
  assert.ok(answers.every((a) => a.status === 200 && a.json.count === 10));
  assert.equal(forge.requests.length, 1, 'five concurrent calls, one request');
  await estate.get('/forgejo-proxy/repos');
  await estate.get('/repos');
  assert.equal(forge.requests.length, 1, 'later calls within cache_s are served from the cache');
  await estate.get('/forgejo-proxy/issues/org/app');
  await estate.get('/forgejo-proxy/issues/org/app');
  await estate.get('/forgejo-proxy/issues/org/app?state=all');
  assert.equal(forge.requests.length, 3, 'issues are cached per repository, state and limit');
});

test('a failure is not cached: the next call asks the forge again', async (t) => {
  const forge = await startAnswering(t, 500, { message: 'boom' });
  const estate = await estateWithForge(t, forge.url);
  assert.equal((await estate.get('/forgejo-proxy/repos')).status, 502);
  assert.equal((await estate.get('/forgejo-proxy/repos')).status, 502);
  assert.equal(forge.requests.length, 2);
});

/** A server that sends a status line, headers and the start of a body, then nothing more. */
function startTrickling(t: Parameters<typeof tempDataDir>[0]) {
  return startFake(t, (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('{"ok":true,"data":[');
  });
}

/** GET `rawPath` exactly as written (no URL normalisation of dot segments). */
function rawGet(base: string, rawPath: string, key: string): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path: rawPath, headers: { 'X-API-Key': key } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}
