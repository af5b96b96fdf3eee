import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { runEstate } from './helpers/cli.ts';

// Remote mode (--url) never follows a redirect: the API key and the request
// body must not travel to wherever a server points. And it never reads more
// of an answer, or of one streamed event, than ESTATE_MAX_ANSWER_BYTES.

interface Seen {
  method: string;
  url: string;
  apiKey: string | undefined;
  body: string;
}

/** A loopback server on `host` (127.0.0.1, 127.0.0.2: two origins), recording every request, closed after the test. */
async function startOn(t: TestContext, host: string, handle: (req: IncomingMessage, res: ServerResponse) => void) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', apiKey: req.headers['x-api-key'] as string | undefined, body });
      handle(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  t.after(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  return { url: `http://${host}:${(server.address() as AddressInfo).port}`, seen };
}

const KEY = 'est_0123456789abcdef0123456789abcdef';
const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};

/** Writes `chunk` for as long as the client reads; resolves `closed` when the client goes away. */
function endless(res: ServerResponse, head: string, chunk: string, headers: Record<string, string>): Promise<void> {
  const closed = new Promise<void>((resolve) => res.on('close', resolve));
  res.writeHead(200, headers);
  res.write(head);
  const more = () => {
    while (!res.destroyed && res.write(chunk));
  };
  res.on('drain', more);
  more();
  return closed;
}

const COMPLETE = ['work', 'complete', '--task-id', 'T-1', '--board', 'ops', '--assignee', 'cron', '--title', 'Secret plans'];

test('a redirect to another origin is never followed: no key, no body there, exit 1 naming the new origin', async (t) => {
  const other = await startOn(t, '127.0.0.2', (_req, res) => json(res, 200, { items: [], count: 0 }));
  const cases = [
    [301, 'GET trends', ['trends']],
    [302, 'POST work complete', COMPLETE],
    [307, 'POST work complete', COMPLETE],
    [308, 'GET trends', ['trends']],
  ] as const;
  for (const [status, what, args] of cases) {
    await t.test(`${status} on ${what}`, async (t) => {
      const first = await startOn(t, '127.0.0.1', (req, res) => {
        res.writeHead(status, { Location: `${other.url}${req.url}` });
        res.end();
      });
      const r = await runEstate([...args, '--url', first.url, '--api-key', KEY]);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stdout, '');
      assert.equal(
        r.stderr,
        `estate: the server at ${first.url} redirected to ${other.url}; estate does not follow redirects, which would send the API key and the request there: if you trust it, use --url ${other.url}\n`,
      );
      assert.equal(first.seen.length, 1);
      assert.equal(first.seen[0]?.apiKey, KEY, 'the key went to the --url server only');
    });
  }
  assert.deepEqual(other.seen, [], 'the other origin saw no request at all');
});

test('a redirect on the same origin is not followed either; the suggested --url keeps a path prefix', async (t) => {
  const server = await startOn(t, '127.0.0.1', (req, res) => {
    if (req.url?.startsWith('/estate/')) return json(res, 200, { items: [], count: 0 });
    res.writeHead(307, { Location: `/estate${req.url}` });
    res.end();
  });
  const r = await runEstate(['trends', '--url', server.url]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`redirected to ${server.url}; estate does not follow redirects, which would send a credential and the request there: if you trust it, use --url ${server.url}/estate\\n$`));
  assert.equal(server.seen.length, 1);
});

test('work feed --follow never follows a redirect of the stream', async (t) => {
  const other = await startOn(t, '127.0.0.2', (_req, res) => json(res, 200, {}));
  const first = await startOn(t, '127.0.0.1', (req, res) => {
    if (req.url?.startsWith('/work/feed')) return json(res, 200, { items: [], count: 0, limit: 20 });
    res.writeHead(307, { Location: `${other.url}${req.url}` });
    res.end();
  });
  const r = await runEstate(['work', 'feed', '--follow', '--json', '--url', first.url, '--api-key', KEY]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`^estate: the server at ${first.url} redirected to ${other.url}; estate does not follow redirects`));
  assert.deepEqual(other.seen, []);
});

test('an answer larger than ESTATE_MAX_ANSWER_BYTES is refused (exit 1) and not read any further', async (t) => {
  let closed: Promise<void> | undefined;
  const server = await startOn(t, '127.0.0.1', (_req, res) => {
    closed = endless(res, '{"items":["', 'x'.repeat(16 * 1024), { 'Content-Type': 'application/json' });
  });
  for (const json of [[], ['--json']]) {
    const r = await runEstate(['trends', ...json, '--url', server.url], { env: { ESTATE_MAX_ANSWER_BYTES: '65536' } });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stderr, `estate: the answer from ${server.url} is larger than 65536 bytes; estate stopped reading it (ESTATE_MAX_ANSWER_BYTES sets the limit)\n`);
    await closed; // the connection was closed, not drained
  }
  // A declared length past the bound is refused before reading.
  const declared = await startOn(t, '127.0.0.1', (_req, res) => json(res, 200, { items: ['y'.repeat(70_000)], count: 1 }));
  const r = await runEstate(['trends', '--url', declared.url], { env: { ESTATE_MAX_ANSWER_BYTES: '65536' } });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /is larger than 65536 bytes/);
});

test('ESTATE_MAX_ANSWER_BYTES must be a whole number of bytes (exit 2)', async () => {
  for (const bad of ['64k', '100']) {
    const r = await runEstate(['trends', '--url', 'http://127.0.0.1:9'], { env: { ESTATE_MAX_ANSWER_BYTES: bad } });
    assert.equal(r.code, 2, bad);
    assert.equal(r.stderr, `estate: ESTATE_MAX_ANSWER_BYTES must be a whole number of bytes from 1024 to ${2 ** 40}, not "${bad}"\n`);
  }
});

test('work feed --follow stops at a streamed event longer than the bound, instead of reading it whole', async (t) => {
  let closed: Promise<void> | undefined;
  const server = await startOn(t, '127.0.0.1', (req, res) => {
    if (req.url?.startsWith('/work/feed')) return json(res, 200, { items: [], count: 0, limit: 20 });
    closed = endless(res, 'event: completion\ndata: ', 'z'.repeat(16 * 1024), { 'Content-Type': 'text/event-stream' });
  });
  const r = await runEstate(['work', 'feed', '--follow', '--url', server.url], { env: { ESTATE_MAX_ANSWER_BYTES: '65536' } });
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`estate: an event of the stream from ${server.url} is longer than 65536 characters; estate stopped reading it`));
  await closed;
});
