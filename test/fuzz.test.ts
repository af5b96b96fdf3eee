import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { operations } from '../src/api/operations/index.ts';
import { docsRoutes, PAGE_ROUTE_DOCS } from '../src/server/docs-routes.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { fakeIssues, startAnswering, startFakeForge } from './helpers/fake-upstreams.ts';
import { type RawResponse, rawRequest } from './helpers/raw-http.ts';
import { newKey, startServer } from './helpers/server.ts';

// Property: whatever arrives on the socket (random methods, paths, query
// strings, headers, framings and bodies: deep nesting, huge numbers, wrong
// types, unicode, NUL bytes, duplicate and __proto__ keys), the server
// - answers (or refuses the bytes) with no 5xx,
// - answers every 4xx with the documented error body and the security headers,
// - never shows a file from outside the data dir, nor where the data dir is,
// - stays up, writes nothing outside the data dir, pollutes no prototype,
// - and leaves logs whose every line parses.
// Seeded and bounded: ESTATE_FUZZ_SEED picks another seed, ESTATE_FUZZ_RUNS
// another number of requests (the long mode, e.g. 50000, has no time limit).

const SEED = Number(process.env.ESTATE_FUZZ_SEED ?? 20_261_122);
const LONG = process.env.ESTATE_FUZZ_RUNS !== undefined;
const RUNS = Number(process.env.ESTATE_FUZZ_RUNS ?? 3000);

// ------------------------------------------------------------ text helpers

/** Percent-encodes every byte of the UTF-8 form except unreserved characters (lone surrogates become U+FFFD, never a throw). */
function pct(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9._~-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Keeps visible ASCII as it is (a request target cannot hold spaces, controls or '#'), encodes the rest. */
function rawish(text: string): string {
  return [...text].map((c) => (/^[\x21-\x7e]$/.test(c) && c !== '#' ? c : pct(c))).join('');
}

/** Header values: any printable Latin-1, never CR, LF or NUL (those make another request, tested apart). */
function headerSafe(text: string): string {
  return [...text].map((c) => (c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) <= 0xff && c !== '\x7f' ? c : '?')).join('').trim();
}

// ------------------------------------------------------------ arbitraries

interface FuzzRequest {
  method: string;
  target: string;
  headers: [string, string][];
  body: Buffer | undefined;
  chunked: boolean;
}

function arbitraries(key: string) {
  const templates = [
    ...operations.map((op) => op.path),
    ...PAGE_ROUTE_DOCS.map((r) => r.path),
    ...docsRoutes(operations).map((r) => r.path),
  ];
  const traversal = fc.constantFrom(
    '..',
    '.',
    '%2e%2e',
    '%2E%2E%2F%2E%2E%2Foutside-canary.json',
    '..%2F..%2Foutside-canary.json',
    '..%2F..%2F..%2Fpackage.json',
    '%2e%2e%5c%2e%2e%5coutside-canary.json',
    '%252e%252e%252foutside-canary.json',
    '%C0%AE%C0%AE%2F',
    '....//',
    '..;',
    '%00',
    '%ff',
    '%',
    '%zz',
    '%2F',
    'outside-canary',
    'outside-canary.json',
    '~',
  );
  const known = fc.constantFrom('scoreboard', 'heartbeat', 'estate_map', 'org', 'repo-001', 'garden', 'note', 'start', 'swagger-ui.css', 'redoc.standalone.js', 'ops', 'run_0000000000000000');
  const segment = fc.oneof(
    { weight: 3, arbitrary: known },
    { weight: 3, arbitrary: traversal },
    { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }).map(pct) },
    { weight: 2, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 24 }).map(rawish) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }).map((s) => pct(pct(s))) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 200, maxLength: 3000 }).map(rawish) },
  );
  const fromTemplate = fc
    .tuple(fc.constantFrom(...templates), fc.array(segment, { minLength: 2, maxLength: 2 }), fc.boolean())
    .map(([template, segments, keepKnown]) => {
      let i = 0;
      return keepKnown && !template.includes('{') ? template : template.replace(/\{\w+\}/g, () => segments[i++ % segments.length] as string);
    });
  const pathname = fc.oneof(
    { weight: 6, arbitrary: fromTemplate },
    { weight: 2, arbitrary: fc.array(segment, { maxLength: 6 }).map((s) => `/${s.join('/')}`) },
    { weight: 1, arbitrary: fc.constantFrom('*', '//', '/\\..\\..\\outside-canary.json', 'http://evil.example/trends', '/%2e%2e/%2e%2e/etc/passwd', '/state/..', '/api/docs/assets/../../../../package.json', '/trends;a=b', '/TRENDS', '/trends/') },
  );

  const queryKey = fc.oneof(
    fc.constantFrom('limit', 'days', 'board', 'max_chars', 'state', 'after', 'api_key', '__proto__', 'constructor', 'limit[]', 'LIMIT', 'v'),
    fc.string({ unit: 'grapheme', maxLength: 8 }),
  );
  const queryValue = fc.oneof(
    fc.integer().map(String),
    fc.bigInt().map(String),
    fc.double().map(String),
    fc.constantFrom('', '0', '1', '-1', '1000', '1001', '1e3', '0x10', ' 5', '5 ', '007', '99999999999999999999999', 'NaN', 'Infinity', 'open', 'closed', 'all', 'start', 'ops', 'null', 'true', '[]', '{}', key),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
  );
  const query = fc
    .array(fc.tuple(queryKey, queryValue, fc.boolean()), { maxLength: 5 })
    .map((pairs) => pairs.map(([k, v, raw]) => (raw ? `${rawish(k)}=${rawish(v)}` : `${pct(k)}=${pct(v)}`)).join('&'));
  const target = fc.tuple(pathname, fc.option(query, { nil: undefined })).map(([p, q]) => (q === undefined ? p : `${p}?${q}`));

  const headerValue = fc.oneof(
    fc.string({ unit: 'grapheme-ascii', maxLength: 60 }).map(headerSafe),
    fc.string({ unit: 'binary', maxLength: 30 }).map(headerSafe),
    fc.constantFrom('', ' ', key, `Bearer ${key}`, 'Bearer ', 'Basic YTpi', `est_000000000000_${'A'.repeat(32)}`, 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9.', '*', 'W/"x"', 'null'),
  );
  const header: fc.Arbitrary<[string, string]> = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom<[string, string]>(['X-API-Key', key], ['Authorization', `Bearer ${key}`]) },
    {
      weight: 3,
      arbitrary: fc.constantFrom<[string, string]>(
        ['Content-Type', 'application/json'],
        ['Content-Type', 'application/json; charset=utf-8'],
        ['Content-Type', 'application/json; charset=utf-16'],
        ['Content-Type', 'text/plain'],
        ['Content-Type', 'application/x-www-form-urlencoded'],
        ['Content-Encoding', 'gzip'],
        ['Accept-Encoding', 'gzip, deflate, br'],
        ['Accept', 'text/event-stream'],
        ['Expect', '100-continue'],
        ['Expect', 'something-else'],
        ['If-None-Match', '*'],
        ['Origin', 'https://evil.example'],
        ['Origin', 'null'],
        ['X-Forwarded-For', '203.0.113.9'],
        ['Last-Event-ID', 'start'],
        ['Range', 'bytes=0-10'],
        ['Cookie', 'session=1'],
        ['X-HTTP-Method-Override', 'DELETE'],
      ),
    },
    { weight: 3, arbitrary: fc.tuple(fc.constantFrom('X-API-Key', 'Authorization', 'X-Request-Id', 'If-None-Match', 'Last-Event-ID', 'Origin', 'Accept', 'Host'), headerValue) },
    { weight: 2, arbitrary: fc.tuple(fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,24}$/), headerValue) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('Bad Header', 'X:Y', 'X-\u00e9', ''), headerValue) },
  );
  // Framing headers come only from `chunked` and the body's length: a random Content-Length would just make the server wait.
  const headers = fc.array(header, { maxLength: 6 }).map((list) => list.filter(([name]) => !/^(content-length|transfer-encoding|connection)$/i.test(name.trim())));

  const fieldName = fc.constantFrom('task_id', 'board', 'assignee', 'title', 'commit_sha', 'output_url', 'summary', 'slug', 'content_type', 'target_site', 'url', 'published_at', 'name', 'model', 'dataset', 'params', '__proto__', 'constructor', 'id', 'completed_at');
  const fieldValue = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 30 }),
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.constantFrom('ops', 'garden', 'note', 'a-slug', 'https://x.example/a', '2026-11-21T00:00:00Z', 'a\u0000b', '\u202e\u0000', 'x'.repeat(5000), '', ' '),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.jsonValue({ maxDepth: 3 }),
  );
  const COMPLETION = { task_id: 'T', board: 'ops', assignee: 'fuzz', title: 'Fuzzed' };
  const ENTRY = { title: 'Fuzzed', slug: 'fuzzed', content_type: 'note', target_site: 'garden' };
  /** A record for `base`'s route, often valid, else with fields of any type added (own `__proto__` keys too) or dropped. */
  const recordFor = (base: Record<string, unknown>) =>
    fc
      .tuple(
        fc.nat({ max: 5000 }),
        fc.option(fc.dictionary(fieldName, fieldValue, { minKeys: 1, maxKeys: 3 }), { nil: undefined, freq: 2 }),
        fc.option(fc.array(fieldName, { minLength: 1, maxLength: 2 }), { nil: undefined, freq: 4 }),
      )
      .map(([n, extra, drop]) => {
        const body: Record<string, unknown> = { ...base };
        if ('task_id' in body) body.task_id = `T-${n}`;
        if ('slug' in body) body.slug = `fuzzed-${n}`;
        for (const [k, v] of Object.entries(extra ?? {})) Object.defineProperty(body, k, { value: v, enumerable: true, writable: true, configurable: true });
        for (const k of drop ?? []) delete body[k];
        return Buffer.from(JSON.stringify(body));
      });
  const record = fc.oneof(recordFor(COMPLETION), recordFor(ENTRY), recordFor({}));
  const rawBody = fc.constantFrom(
    '{"task_id":"a","task_id":"b","board":"ops","assignee":"x","title":"t"}',
    '{"__proto__":{"admin":true},"task_id":"p","board":"ops","assignee":"x","title":"t"}',
    '{"params":{"__proto__":{"polluted":true}},"name":"p"}',
    '{"params":{"constructor":{"prototype":{"polluted":true}}}}',
    '{"task_id":1e999,"board":"ops","assignee":"x","title":"t"}',
    '{"limit":123456789012345678901234567890}',
    '-0',
    'null',
    '"\\ud800"',
    '{"title":"\\u0000"}',
    '\ufeff{"name":"bom"}',
    '{',
    '{"a":}',
    '[]',
    '   ',
  );
  const body = fc.oneof(
    { weight: 5, arbitrary: record },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 5 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null')) },
    { weight: 2, arbitrary: rawBody.map((s) => Buffer.from(s, 'utf8')) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 200_000 }).map((n) => Buffer.from(`${'['.repeat(n)}${']'.repeat(n)}`)) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 200 }).map((n) => Buffer.from(`{"params":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`)) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)) },
    { weight: 1, arbitrary: fc.constant(Buffer.alloc(1024 * 1024 + 1, 0x20)) },
  );

  const method = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('GET', 'POST') },
    { weight: 2, arbitrary: fc.constantFrom('HEAD', 'DELETE', 'PUT', 'PATCH', 'OPTIONS') },
    { weight: 1, arbitrary: fc.constantFrom('TRACE', 'PROPFIND', 'get', 'GETT', 'BREW', 'M-SEARCH', 'PURGE') },
  );
  const generic: fc.Arbitrary<FuzzRequest> = fc
    .record({ method, target, headers, body: fc.option(body, { nil: undefined, freq: 2 }), chunked: fc.boolean() })
    .map((r) => ({ ...r, chunked: r.chunked && r.body !== undefined }));
  const writeRoute = fc.constantFrom<[string, Record<string, unknown>]>(['/work/complete', COMPLETION], ['/publishing/register', ENTRY], ['/training/start', {}]);
  const write: fc.Arbitrary<FuzzRequest> = fc
    .tuple(
      writeRoute.chain(([route, base]) => fc.tuple(fc.constant(route), fc.oneof({ weight: 3, arbitrary: recordFor(base) }, { weight: 1, arbitrary: body }))),
      fc.constantFrom<[string, string][]>([['X-API-Key', key]], [['Authorization', `Bearer ${key}`]], []),
      headers,
      fc.boolean(),
    )
    .map(([[route, b], auth, extra, chunked]) => ({ method: 'POST', target: route, headers: [...auth, ['Content-Type', 'application/json'], ...extra], body: b, chunked }));
  return fc.oneof({ weight: 7, arbitrary: generic }, { weight: 3, arbitrary: write });
}

function encode(r: FuzzRequest): Buffer {
  const lines = [`${r.method} ${r.target} HTTP/1.1`, 'Host: 127.0.0.1', ...r.headers.map(([n, v]) => `${n}: ${v}`), 'Connection: close'];
  let payload: Buffer = Buffer.alloc(0);
  if (r.body !== undefined && r.chunked) {
    lines.push('Transfer-Encoding: chunked');
    const parts: Buffer[] = [];
    for (let at = 0; at < r.body.length; at += 4096) {
      const chunk = r.body.subarray(at, at + 4096);
      parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
    }
    payload = Buffer.concat([...parts, Buffer.from('0\r\n\r\n')]);
  } else if (r.body !== undefined) {
    lines.push(`Content-Length: ${r.body.length}`);
    payload = r.body;
  }
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), payload]);
}

/** Every file under `dir` whose name ends in .jsonl, and each of its lines that is not a JSON object. */
async function unparsable(dir: string): Promise<{ files: number; bad: string[] }> {
  const bad: string[] = [];
  const names = (await readdir(dir, { recursive: true })).filter((f) => f.endsWith('.jsonl') || (f.startsWith('training') && f.endsWith('.json')));
  for (const name of names) {
    const text = await readFile(path.join(dir, name), 'utf8');
    const lines = name.endsWith('.jsonl') ? text.split('\n').filter((l) => l !== '') : [text];
    for (const line of lines) {
      try {
        const value: unknown = JSON.parse(line);
        if (value === null || typeof value !== 'object' || Array.isArray(value)) bad.push(`${name}: ${line.slice(0, 80)}`);
      } catch {
        bad.push(`${name}: ${line.slice(0, 80)}`);
      }
    }
  }
  return { files: names.length, bad };
}

test(`fuzz: ${RUNS} generated requests (seed ${SEED}) never get a 5xx, a stray body, a file from outside the data dir or its path`, { timeout: LONG ? Infinity : 300_000 }, async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const outside = path.dirname(dir);
  const canary = `CANARY-${randomBytes(12).toString('hex')}`;
  for (const name of ['outside-canary.json', 'outside-canary', 'package.json', 'passwd']) await writeFile(path.join(outside, name), JSON.stringify({ canary }));
  const forge = await startFakeForge(t, { repos: 3, issues: { 'org/repo-001': fakeIssues(5) } });
  const provider = await startAnswering(t, 200, { models: [] });
  await writeFile(
    path.join(dir, 'estate.config.json'),
    JSON.stringify({
      node_name: 'fuzz',
      forge: { url: forge.url, timeout_ms: 5000, cache_s: 300 },
      providers: [{ name: 'llm', url: `${provider.url}/api/tags` }],
      providers_cache_s: 300,
      stats: { command: [process.execPath, '-e', 'console.log(JSON.stringify({visits: 42}))'], cache_s: 300 },
    }),
  );
  const key = await newKey(dir, 'fuzzer');
  const logLines: string[] = [];
  const server = await startServer(t, dir, { log: (line) => logLines.push(JSON.stringify(line)) });
  const outsideBefore = (await readdir(outside)).sort();
  const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort();

  const doc = (await server.get('/api/openapi.json')).json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(doc, 'openapi.json');
  const errorShape = ajv.getSchema('openapi.json#/components/schemas/ErrorResponse');
  const validationShape = ajv.getSchema('openapi.json#/components/schemas/HTTPValidationError');
  assert.ok(errorShape && validationShape, 'the document publishes both error shapes');

  const statuses = new Map<number, number>();
  const check = (request: FuzzRequest, r: RawResponse | undefined) => {
    const where = `${request.method} ${request.target.slice(0, 200)}`;
    assert.ok(r, `${where}: the server answered`);
    statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    const body = r.body.toString('utf8');
    assert.ok(r.status < 500, `${where}: ${r.status} ${body.slice(0, 300)}`);
    assert.equal(r.headers['x-content-type-options'], 'nosniff', where);
    assert.match(r.headers['x-request-id'] ?? '', /^[A-Za-z0-9._-]{1,128}$/, where);
    const everything = `${JSON.stringify(r.headers)}\n${body}`;
    assert.ok(!everything.includes(canary), `${where}: a file from outside the data dir was served`);
    assert.ok(!everything.includes(outside), `${where}: the data dir's location was shown`);
    assert.doesNotMatch(body, /\n\s+at |node:internal/, `${where}: a stack trace`);
    if (r.status >= 400 && request.method !== 'HEAD') {
      assert.match(r.headers['content-type'] ?? '', /^application\/json/, where);
      const json: unknown = JSON.parse(body);
      const shape = r.status === 422 ? validationShape : errorShape;
      assert.ok(shape(json), `${where}: ${r.status} body ${body.slice(0, 300)} does not match the documented shape: ${ajv.errorsText(shape.errors)}`);
    }
  };

  const details = await fc.check(
    fc.asyncProperty(arbitraries(key), async (request) => {
      check(request, await rawRequest(server.url, encode(request), { head: request.method === 'HEAD', timeoutMs: 15_000 }));
    }),
    { seed: SEED, numRuns: RUNS, endOnFailure: process.env.ESTATE_FUZZ_SHRINK === '0', ...(LONG ? {} : { interruptAfterTimeLimit: 240_000 }) },
  );
  if (details.failed) {
    const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    assert.fail(`${fc.defaultReportMessage(details)}\n\nWhy: ${cause}\nReplay with ESTATE_FUZZ_SEED=${details.seed} (path ${details.counterexamplePath})`);
  }
  assert.ok(details.numRuns >= Math.min(RUNS, 200), `only ${details.numRuns} requests ran in the time limit`);

  const count = (test: (s: number) => boolean) => [...statuses].filter(([s]) => test(s)).reduce((n, [, c]) => n + c, 0);
  t.diagnostic(`statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`);
  assert.ok(count((s) => s === 201) > 10, 'many writes were stored');
  assert.ok(count((s) => s === 200) > 50, 'many reads answered');
  for (const status of [400, 403, 404, 405, 413, 422]) assert.ok(count((s) => s === status) > 0, `some request got ${status}`);

  assert.equal((await server.get('/healthz')).status, 200, 'the server is up');
  assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeBefore, 'no prototype was polluted');
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.deepEqual((await readdir(outside)).sort(), outsideBefore, 'nothing was written outside the data dir');
  const logs = await unparsable(dir);
  assert.ok(logs.files >= 3, 'the logs and runs were found');
  assert.deepEqual(logs.bad, [], 'every line of every log parses');
  for (const line of logLines) {
    assert.ok(!line.includes(outside), `log line shows the data dir: ${line}`);
    assert.ok(!line.includes(key), `log line shows the key: ${line}`);
    assert.ok(!line.includes(canary), line);
    assert.doesNotMatch(line, /\\n\s+at /, line);
  }
});

test('JSON nested deeper than 64 levels is 422 json_invalid before it is parsed; brackets inside strings do not count', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const nested = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const cases: [string, string, number][] = [
    ['63 levels of params', `{"params":{"a":${nested(62)}}}`, 201],
    ['65 levels of params', `{"params":{"a":${nested(64)}}}`, 422],
    ['200000 levels', nested(200_000), 422],
    ['brackets in a string', `{"name":"${'['.repeat(150)}"}`, 201],
    ['escaped quotes in a string', `{"name":"\\"${'{'.repeat(100)}"}`, 201],
  ];
  for (const [name, body, status] of cases) {
    const r = await server.request('POST', '/training/start', { headers: { 'X-API-Key': key }, body });
    assert.equal(r.status, status, `${name}: ${r.text.slice(0, 200)}`);
    if (status === 422 && name !== '200000 levels') assert.deepEqual(r.json.detail, [{ loc: ['body'], msg: 'JSON decode error: nested deeper than 64 levels', type: 'json_invalid' }]);
  }
});
