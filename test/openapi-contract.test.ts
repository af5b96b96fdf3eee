import assert from 'node:assert/strict';
import { test } from 'node:test';
import { operations } from '../src/api/operations/index.ts';
import { PAGE_ROUTE_DOCS } from '../src/server/docs-routes.ts';
import {
  answer,
  badInput,
  CONTRACT_ENV,
  contractChecker,
  type Estate,
  estateDir,
  type Json,
  type Observed,
  paramsOf,
  type Route,
  sampleBody,
  sampleValue,
  urlOf,
} from './helpers/openapi-contract.ts';
import { newKey, readResponse, startServer } from './helpers/server.ts';

// The contract: every operation of the table (and every route the document
// describes beside it), called over HTTP in several estates, answers only
// statuses its OpenAPI description lists, with bodies and headers that match
// what the document publishes for that status. Besides the calls themselves,
// probes aim at every kind of answer: 304 to the ETag just received, 415 to a
// body that is not sent as JSON, 422 to a repeated query parameter, 404 and
// 405 (components.responses), and 429 from a server with a tiny rate limit.
// The table is walked generically, so operations added later are covered as they land.

/** Path parameter values the data cannot supply (the fake forge holds `org/repo-001`). */
const SAMPLE_PATH: Record<string, string> = { owner: 'org', repo: 'repo-001', target: 'contract-hook' };
/** Response fields that supply a path parameter under another name. */
const HARVEST_ALIASES: Record<string, string> = { site: 'target_site' };
/** Request bodies for a first, successful call, where the schema alone does not give one. */
const SAMPLE_TS = new Date().toISOString();
const SAMPLE_BODY: Record<string, Json> = {
  'mcp.call': { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  'ingest.create': {
    samples: [
      {
        trend: { ts: SAMPLE_TS, node: 'contract-node', cpu_pct: 12.5, load1: 0.5, mem_used_pct: 40 },
        disks: [{ ts: SAMPLE_TS, node: 'contract-node', mount: '/', fs_type: 'ext4', total_bytes: 100, used_bytes: 40, free_bytes: 60 }],
        pulse: { ts: SAMPLE_TS, node: 'contract-node', status: 'healthy', checks: { memory: { status: 'healthy', value: 40 } } },
      },
    ],
  },
};

const pathParams = new Set(operations.flatMap((op) => [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string)));

/** The status each probe aims at. */
const AIMS: Record<string, number> = {
  'no credential': 403,
  'invalid credential': 403,
  'invalid input': 422,
  'body over 1 MiB': 413,
  'body not JSON': 422,
  'body as text/plain': 415,
  'body without Content-Type': 415,
  'repeated parameter': 422,
  'If-None-Match': 304,
  'Location read back': 200,
  'unknown path': 404,
  'wrong method': 405,
};

/** A JSON answer without its top-level `volatile` fields (which the ETag leaves out). */
function stable(json: unknown, volatile: readonly string[]): unknown {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return json;
  return Object.fromEntries(Object.entries(json).filter(([k]) => !volatile.includes(k)));
}

/** `name=v&name=w`: a query parameter sent twice (with two values where it is a number). */
function sentTwice(p: Json): string {
  const v = sampleValue(p.schema as Json, p.name as string);
  const w = typeof v === 'number' ? v + 1 : v;
  return `${p.name}=${encodeURIComponent(String(v))}&${p.name}=${encodeURIComponent(String(w))}`;
}

/** The query parameter a repeated-parameter probe sends twice: `limit` (or a range's `points`) where there is one. */
function repeatable(route: Route, doc: Json): Json | undefined {
  const query = paramsOf(route, doc).filter((p) => p.in === 'query');
  return query.find((p) => p.name === 'limit') ?? query.find((p) => p.name === 'points') ?? query[0];
}

function assertRepeated(r: { json: any }, name: string, where: string): void {
  const issues = (r.json?.detail ?? []) as Json[];
  assert.ok(
    issues.some((i) => JSON.stringify(i.loc) === JSON.stringify(['query', name]) && i.type === 'repeated_parameter'),
    `${where}: no repeated_parameter issue at ["query","${name}"]: ${JSON.stringify(r.json)}`,
  );
}

test('every operation answers only documented statuses, with bodies and headers that match the published document', async (t) => {
  const estates: Estate[] = [];
  for (const kind of ['demo', 'empty', 'down'] as const) {
    const dir = await estateDir(t, kind);
    estates.push({ name: kind, key: await newKey(dir, 'alice'), server: await startServer(t, dir, { env: CONTRACT_ENV }) });
  }
  const docResponse = await (estates[0] as Estate).server.get('/api/openapi.json');
  assert.equal(docResponse.status, 200);
  const doc = docResponse.json as Json;
  const { observed, check, checkShared } = contractChecker(t, doc);

  const ordered = [...operations.filter((op) => op.method !== 'DELETE'), ...operations.filter((op) => op.method === 'DELETE')];
  for (const estate of estates) {
    const harvested: Record<string, string> = {};
    const harvest = (value: unknown) => {
      if (Array.isArray(value)) return value.forEach(harvest);
      if (value === null || typeof value !== 'object') return;
      for (const [k, v] of Object.entries(value)) {
        for (const param of pathParams) {
          if ((k === param || HARVEST_ALIASES[param] === k) && typeof v === 'string' && harvested[param] === undefined) harvested[param] = v;
        }
        harvest(v);
      }
    };
    const auth = { 'X-API-Key': estate.key };
    for (const op of ordered) {
      const operation = doc.paths[op.path]?.[op.method.toLowerCase()] as Json;
      const values: Record<string, string> = {};
      for (const p of (operation?.parameters ?? []) as Json[]) {
        if (p.in !== 'path') continue;
        values[p.name] = harvested[p.name] ?? SAMPLE_PATH[p.name] ?? p.schema?.enum?.[0] ?? p.example ?? 'sample';
      }
      const bodySchema = operation?.requestBody?.content?.['application/json']?.schema as Json | undefined;
      const body = op.input.body ? (SAMPLE_BODY[op.id] ?? sampleBody(bodySchema)) : undefined;

      const ok = await estate.server.request(op.method, urlOf(op, values), { headers: auth, body });
      harvest(ok.json);
      await check(estate, op, 'with a credential', ok);
      const etag = ok.headers.get('etag');
      if (etag) {
        // 304 while the answer is the same but for its volatile fields; one that changed (a window that moved, a fresh run) is a 200 with a new tag.
        const again = await estate.server.request(op.method, urlOf(op, values), { headers: { ...auth, 'If-None-Match': etag } });
        const changed = again.status === 200 && JSON.stringify(stable(again.json, op.volatile)) !== JSON.stringify(stable(ok.json, op.volatile));
        await check(estate, op, changed ? 'If-None-Match, answer changed' : 'If-None-Match', again);
        if (again.status === 304) assert.equal(again.headers.get('etag'), etag, `${op.id}: the 304 names the tag it matched`);
        if (changed) assert.notEqual(again.headers.get('etag'), etag, `${op.id}: a changed answer has a new tag`);
      }

      if (estate.name !== 'demo') continue;
      if (op.access !== 'public') {
        const headers: Record<string, string> = op.access === 'user' ? { 'X-API-Key': 'not-a-key' } : {};
        await check(estate, op, op.access === 'user' ? 'invalid credential' : 'no credential', await estate.server.request(op.method, urlOf(op, values), { headers, body }));
      }
      if (op.access === 'user') await check(estate, op, 'no credential (optional)', await estate.server.request(op.method, urlOf(op, values), { body }));
      const bad = badInput(op, Boolean(op.input.body), doc);
      if (bad) {
        const r = await estate.server.request(op.method, urlOf(op, { ...values, ...bad.path }, bad.query), { headers: auth, body: bad.body ?? body });
        await check(estate, op, 'invalid input', r);
      }
      const twice = repeatable(op, doc);
      if (twice) {
        const r = await estate.server.request(op.method, urlOf(op, values, sentTwice(twice)), { headers: auth, body });
        await check(estate, op, 'repeated parameter', r);
        assertRepeated(r, twice.name, op.id);
      }
      if (op.input.body && ok.status === 201 && body) {
        // A write sent again: an identical replay, then the same record with a field changed.
        await check(estate, op, 'identical replay', await estate.server.request(op.method, urlOf(op, values), { headers: auth, body }));
        // Key fields (ids, slug, board, site) stay, so it is the same record with other content.
        const field = Object.keys(body).find((k) => typeof body[k] === 'string' && !/id$|slug|board|site/.test(k));
        if (field) {
          const changed = { ...body, [field]: `${String(body[field]).slice(0, 20)}-changed` };
          await check(estate, op, 'changed replay', await estate.server.request(op.method, urlOf(op, values), { headers: auth, body: changed }));
        }
      }
      if (op.input.body) {
        // Over the route's own limit (1 MiB, more for /ingest).
        const tooBig = JSON.stringify({ padding: 'x'.repeat(op.maxBodyBytes ?? 1024 * 1024) });
        await check(estate, op, 'body over 1 MiB', await estate.server.request(op.method, urlOf(op, values), { headers: auth, body: tooBig }));
        await check(estate, op, 'body not JSON', await estate.server.request(op.method, urlOf(op, values), { headers: auth, body: '{"title": ' }));
        const json = JSON.stringify(body);
        await check(estate, op, 'body as text/plain', await estate.server.request(op.method, urlOf(op, values), { headers: { ...auth, 'Content-Type': 'text/plain' }, body: json }));
        // fetch sends bytes with no Content-Type of its own (a string would go as text/plain).
        const untyped = await fetch(estate.server.url + urlOf(op, values), { method: op.method, headers: auth, body: new TextEncoder().encode(json) });
        await check(estate, op, 'body without Content-Type', await readResponse(untyped));
      }
    }
    for (const route of PAGE_ROUTE_DOCS) {
      // A route that takes a body (POST /mcp: JSON-RPC) is sent its sample, as an MCP client sends it.
      const probe = (headers: Record<string, string> = {}) =>
        route.method === 'POST'
          ? estate.server.request('POST', route.path, { headers: { Accept: 'application/json, text/event-stream', ...headers }, body: SAMPLE_BODY[route.id] })
          : answer(estate.server, route.path, route.produces, headers);
      await check(estate, route, 'public route', await probe());
      if (route.access !== 'public') await check(estate, route, 'route with a key', await probe(auth));
      if (estate.name !== 'demo') continue;
      const bad = badInput(route, false, doc);
      if (bad?.query) await check(estate, route, 'invalid input', await answer(estate.server, `${route.path}?${bad.query}`, route.produces));
      const twice = repeatable(route, doc);
      if (twice) {
        const r = await answer(estate.server, `${route.path}?${sentTwice(twice)}`, route.produces);
        await check(estate, route, 'repeated parameter', r);
        assertRepeated(r, twice.name, route.id);
      }
    }
  }

  // Answers no operation gives: an unknown path, and each documented path with a method it lacks.
  const demo = estates[0] as Estate;
  const unknown = await demo.server.get('/no-such-route', { 'X-API-Key': demo.key });
  await checkShared(demo, { id: 'unknown path', method: 'GET', path: '/no-such-route' }, 'unknown path', 'NotFound', unknown);
  assert.deepEqual(unknown.json, { detail: 'Not Found' });
  const paths = Object.entries(doc.paths as Record<string, Json>);
  for (const [p, item] of paths) {
    const url = p.replace(/\{\w+\}/g, 'sample');
    // Every documented path the URL matches (`/publishing/register` is also a `/publishing/{entry_id}`).
    const methods = paths.filter(([q]) => new RegExp(`^${q.replace(/\{\w+\}/g, '[^/]+')}$`).test(url)).flatMap(([, i]) => Object.keys(i).map((m) => m.toUpperCase()));
    const wrong = methods.includes('DELETE') ? 'PUT' : 'DELETE';
    const r = await demo.server.request(wrong, url, { headers: { 'X-API-Key': demo.key } });
    await checkShared(demo, { id: `${wrong} ${p}`, method: wrong as Route['method'], path: p }, 'wrong method', 'MethodNotAllowed', r);
    const allowed = [...new Set([...methods, ...(methods.includes('GET') ? ['HEAD'] : [])])].sort();
    assert.deepEqual(r.headers.get('allow')?.split(', '), allowed, `${wrong} ${url}: Allow lists the documented methods`);
    for (const m of Object.keys(item)) assert.equal(item[m].responses['405']?.$ref, '#/components/responses/MethodNotAllowed', `${m} ${p} lists 405`);
  }

  // A server with one request a minute (loopback not exempt): after one call, every rate-limited route answers 429.
  const limitedDir = await estateDir(t, 'limited');
  const limited: Estate = { name: 'limited', key: await newKey(limitedDir), server: await startServer(t, limitedDir) };
  assert.equal((await limited.server.get('/no-such-route')).status, 404, 'the first call takes the only token');
  const charged = new Map<string, boolean>();
  for (const op of operations) {
    charged.set(op.id, op.rateLimited);
    const body = op.input.body ? sampleBody(doc.paths[op.path][op.method.toLowerCase()].requestBody.content['application/json'].schema) : undefined;
    await check(limited, op, 'over the rate limit', await limited.server.request(op.method, urlOf(op, SAMPLE_PATH), { body }));
  }
  for (const route of PAGE_ROUTE_DOCS) {
    charged.set(route.id, true);
    await check(limited, route, 'over the rate limit', await answer(limited.server, route.path, route.produces));
  }

  await t.test('every operation succeeded at least once, and every probe got the status it aims at', () => {
    for (const op of [...operations, ...PAGE_ROUTE_DOCS]) {
      const mine = observed.filter((o) => o.route.id === op.id && o.estate !== 'limited');
      assert.ok(mine.some((o) => o.status >= 200 && o.status < 300), `${op.id}: no 2xx answer (${mine.map((o) => `${o.estate}/${o.probe}: ${o.status}`).join(', ')}); add a sample input`);
    }
    const aim = (o: Observed) => (o.probe === 'over the rate limit' ? (charged.get(o.route.id) ? 429 : 200) : AIMS[o.probe]);
    for (const o of observed) {
      const status = aim(o);
      if (status !== undefined) assert.equal(o.status, status, `${o.route.id}: ${o.probe} (${o.estate} estate)`);
    }
    for (const probe of Object.keys(AIMS)) assert.ok(observed.some((o) => o.probe === probe), `no answer to the probe "${probe}"`);
  });

  await t.test('the probes reached every kind of documented answer', () => {
    const statuses = new Set(observed.map((o) => o.status));
    for (const s of [201, 304, 403, 404, 405, 409, 413, 415, 422, 429, 502, 503, 504]) assert.ok(statuses.has(s), `no route answered ${s}`);
  });
});
