import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { bigFeedDir as bigLog, nonReader } from './helpers/big-feed.ts';
import { startServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// One client's big public reads cost that client, not everyone: answers
// charge the rate limit by weight (a token per 64 KiB), the expensive routes
// (the work feed among them) share their slots between clients in turn with
// a bounded line per client, and one client's unread answers hold at most
// its share of the unsent bytes. Two clients here are two loopback
// addresses (127.0.0.2 and 127.0.0.3), each with buckets and shares of its own;
// the completions are about 4.6 KB each, so a feed of 1000 is 1 MiB (truncated).

const BIG = '/work/feed?limit=1000';
// 5 of those: about 23 KB, one token, and under the 64 KiB that always go out.
const SMALL = '/work/feed?limit=5';

interface Answer {
  status: number;
  bytes: number;
  retryAfter: string | undefined;
  detail: string | undefined;
}

/** GET `target` from the loopback address `from`, on a connection of its own; the whole answer read. */
function getFrom(url: string, target: string, from: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}${target}`, { localAddress: from, agent: false, timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        let detail: string | undefined;
        if (res.statusCode !== 200) detail = (JSON.parse(body.toString('utf8')) as { detail?: string }).detail;
        resolve({ status: res.statusCode ?? 0, bytes: body.length, retryAfter: res.headers['retry-after'], detail });
      });
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${target} from ${from}: no answer`)));
    req.on('error', reject);
  });
}

test('the rate limit weighs answers: a client of big reads runs out of tokens after a few, another client reads on', async (t) => {
  const burst = 40;
  // One token a minute: nothing refills while the test runs.
  const dir = await bigLog(t, { rate_limit: { exempt_loopback: false, requests_per_minute: 1, burst } });
  const server = await startServer(t, dir);
  const big: Answer[] = [];
  for (let i = 0; i < burst; i++) {
    const answer = await getFrom(server.url, BIG, '127.0.0.2');
    big.push(answer);
    if (answer.status !== 200) break;
  }
  // Each answer took one token per 64 KiB or part of them: the bucket of 40 allows as many big reads as that leaves.
  let tokens = burst;
  let allowed = 0;
  for (const answer of big) {
    if (tokens < 1 || answer.status !== 200) break;
    tokens -= Math.ceil(answer.bytes / (64 * 1024));
    allowed++;
  }
  const refused = big.at(-1) as Answer;
  assert.ok(big[0] && big[0].bytes > 900 * 1024, `a big read answers about 1 MiB (${big[0]?.bytes} bytes)`);
  assert.equal(big.filter((a) => a.status === 200).length, allowed, 'as many big reads as their weight allows');
  assert.ok(allowed <= 3, `${allowed} big reads out of a burst of ${burst} requests`);
  assert.equal(refused.status, 429);
  assert.match(refused.retryAfter ?? '', /^[1-9]\d*$/);
  assert.match(refused.detail ?? '', /too many requests/);
  // The other client has its own bucket, untouched: every small read of its burst is answered.
  const small: number[] = [];
  for (let i = 0; i < burst - 2; i++) small.push((await getFrom(server.url, SMALL, '127.0.0.3')).status);
  assert.deepEqual(new Set(small), new Set([200]));
  assert.equal((await getFrom(server.url, BIG, '127.0.0.2')).status, 429, 'the big reader is still refused');
});

test('a burst of big reads waits in its own line: past its share it is 429, and another client is answered before that line is done', async (t) => {
  // The default shares: 8 at once, 2 of one client's, 64 waiting, 32 of one client's.
  const dir = await bigLog(t, { rate_limit: { enabled: false } });
  const server = await startServer(t, dir);
  const events: string[] = [];
  const burst = Array.from({ length: 80 }, () =>
    getFrom(server.url, BIG, '127.0.0.2').then((a) => {
      events.push(`big ${a.status}`);
      return a;
    }),
  );
  // A refusal comes back at once: then the big reader's line is full.
  await waitUntil('the big reader is refused past its share', () => events.includes('big 429'), 30_000);
  const small = await getFrom(server.url, SMALL, '127.0.0.3');
  events.push(`small ${small.status}`);
  const answers = await Promise.all(burst);

  assert.equal(small.status, 200, 'the other client is answered, not refused');
  const served = answers.filter((a) => a.status === 200).length;
  // Two running and 32 waiting when the line filled, and a few more if some were answered before the whole burst arrived.
  assert.ok(served >= 34 && served < 80, `${served} of the big reader's 80 answered`);
  for (const refused of answers.filter((a) => a.status !== 200)) {
    assert.equal(refused.status, 429, 'the big reader is refused, not the server busy (503)');
    assert.equal(refused.retryAfter, '1');
    assert.match(refused.detail ?? '', /from you at once/);
  }
  const smallAt = events.indexOf('small 200');
  const bigAfter = events.slice(smallAt + 1).filter((e) => e === 'big 200').length;
  assert.ok(bigAfter > 0, `the small read was answered before the big reader's line was done (${bigAfter} big reads answered after it)`);
});

test("one client's unread answers take its share of the unsent bytes, not the whole: it gets 429, another client's big read 200", async (t) => {
  const dir = await bigLog(t, {
    rate_limit: { enabled: false },
    timeouts: { send_ms: 60_000 },
    max_unsent_bytes: 16 * 1024 * 1024,
    max_unsent_bytes_per_client: 2 * 1024 * 1024,
  });
  const server = await startServer(t, dir);
  // Many answers over each connection: the kernel's buffers take a few MB, the rest would wait in the server,
  // 48 MiB asked for in all: without a share of its own this client would hold the whole 16 MiB.
  for (let i = 0; i < 3; i++) await nonReader(t, server.url, BIG, 16, '127.0.0.2');
  let mine: Answer | undefined;
  await waitUntil(
    "the non-reader's own big reads are refused once its unread answers hold its share",
    async () => {
      mine = await getFrom(server.url, BIG, '127.0.0.2');
      // (While the burst of pipelined requests is still being answered, its line of the feed may be full: 429 too.)
      return mine.status !== 200 && !/from you at once/.test(mine.detail ?? '');
    },
    30_000,
  );
  assert.equal(mine?.status, 429);
  assert.equal(mine?.retryAfter, '1');
  assert.match(mine?.detail ?? '', /your answers are still unread/);
  const other = await getFrom(server.url, BIG, '127.0.0.3');
  assert.equal(other.status, 200, "another client's big read goes out: the non-reader holds only its share");
  assert.ok(other.bytes > 900 * 1024);
  assert.equal((await getFrom(server.url, SMALL, '127.0.0.2')).status, 200, 'a small answer to the non-reader still goes out');
});
