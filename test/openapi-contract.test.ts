import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Operation } from '../src/api/define-operation.ts';
import { operationId } from '../src/api/openapi.ts';
import { operations } from '../src/api/operations/index.ts';
import { PAGE_ROUTE_DOCS } from '../src/server/docs-routes.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { fakeIssues, refusedUrl, startAnswering, startFakeForge, startHanging } from './helpers/fake-upstreams.ts';
import { newKey, readResponse, startServer, type TestResponse, type TestServer } from './helpers/server.ts';

// The contract: every operation of the table (and every route the document
// describes beside it), called over HTTP in several estates, answers only
// statuses its OpenAPI description lists, with bodies that validate against
// the schema published for that status. The table is walked generically, so
// operations added later are covered as they land.

type Json = Record<string, any>;

/** Path parameter values the data cannot supply (the fake forge holds `org/repo-001`). */
const SAMPLE_PATH: Record<string, string> = { owner: 'org', repo: 'repo-001' };
/** Response fields that supply a path parameter under another name. */
const HARVEST_ALIASES: Record<string, string> = { site: 'target_site' };
/** Request bodies for a first, successful call, where the schema alone does not give one. */
const SAMPLE_BODY: Record<string, Json> = {};

const pathParams = new Set(operations.flatMap((op) => [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string)));

interface Estate {
  name: string;
  server: TestServer;
  key: string;
}

/** What the checks need of an operation or of a route served beside the table. */
type Route = Pick<Operation, 'id' | 'method' | 'path'>;

interface Observed {
  estate: string;
  route: Route;
  probe: string;
  status: number;
}

/** A value for each required field of a request body schema. */
function sampleBody(schema: Json | undefined): Json {
  const body: Json = {};
  for (const name of (schema?.required ?? []) as string[]) body[name] = sampleValue(schema?.properties?.[name] ?? {}, name);
  return body;
}

function sampleValue(s: Json, name: string): unknown {
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  if (Array.isArray(s.enum)) return s.enum[0];
  if ('const' in s) return s.const;
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  if (type === 'integer' || type === 'number') return s.minimum ?? 1;
  if (type === 'boolean') return true;
  if (type === 'array') return [];
  if (type === 'object') return sampleBody(s);
  if (s.format === 'uri' || /url/.test(name)) return 'https://example.org/contract';
  if (s.format === 'date-time' || /(_at|^ts)$/.test(name)) return '2026-11-21T12:00:00.000Z';
  return `contract-${name.replace(/_/g, '-')}`.slice(0, s.maxLength ?? 100);
}

/** Query/path/body inputs that break the operation's own schema (a 422), or undefined when it takes none that can be broken. */
function badInput(op: Route, hasBody: boolean, doc: Json): { path?: Record<string, string>; query?: string; body?: string } | undefined {
  const params = (doc.paths[op.path][op.method.toLowerCase()].parameters ?? []) as Json[];
  for (const p of params) {
    if (p.$ref) continue; // shared header parameters (If-None-Match): nothing in them breaks a route
    const s = p.schema as Json;
    const bad = s.type === 'integer' ? 'abc' : s.enum || s.pattern ? '!!!' : typeof s.maxLength === 'number' ? 'x'.repeat(s.maxLength + 1) : undefined;
    if (bad === undefined) continue;
    if (p.in === 'path') return { path: { [p.name]: bad } };
    return { query: `${p.name}=${encodeURIComponent(bad)}` };
  }
  if (hasBody) return { body: JSON.stringify({ not_a_field_of_this_body: 1 }) };
  return undefined;
}

function urlOf(op: Route, values: Record<string, string>, query = ''): string {
  const p = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? 'sample'));
  return query ? `${p}?${query}` : p;
}

/** A GET of a page or an event stream: a stream is read up to its headers, then dropped. */
async function answer(server: TestServer, route: string, produces: string): Promise<TestResponse> {
  if (produces !== 'text/event-stream') return server.get(route);
  const abort = new AbortController();
  const res = await fetch(server.url + route, { signal: abort.signal });
  if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
    abort.abort();
    return { status: res.status, headers: res.headers, text: '', json: undefined };
  }
  return readResponse(res);
}

async function estateDir(t: TestContext, kind: 'demo' | 'empty' | 'down'): Promise<string> {
  if (kind === 'empty') return tempDataDir(t);
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const configFile = path.join(dir, 'estate.config.json');
  const config = JSON.parse(await readFile(configFile, 'utf8')) as Json;
  if (kind === 'demo') {
    const forge = await startFakeForge(t, { repos: 3, issues: { 'org/repo-001': fakeIssues(5) } });
    const provider = await startAnswering(t, 200, { models: [] });
    config.forge = { url: forge.url, timeout_ms: 5000, cache_s: 0 };
    config.providers = [{ name: 'fake', url: `${provider.url}/api/tags`, timeout_ms: 5000, expect_status: 200 }];
    config.stats = { command: [process.execPath, '-e', 'process.stdout.write(JSON.stringify({ visitors: 42 }))'], timeout_ms: 10_000, cache_s: 0 };
  } else {
    const hanging = await startHanging(t);
    config.forge = { url: hanging.url, timeout_ms: 200, cache_s: 0 };
    config.providers = [{ name: 'gone', url: await refusedUrl(), timeout_ms: 500 }];
    config.stats = { command: [process.execPath, '-e', 'process.stdout.write("not json")'], timeout_ms: 10_000, cache_s: 0 };
  }
  await writeFile(configFile, JSON.stringify(config));
  return dir;
}

test('every operation answers only documented statuses, with bodies that match the published schemas', async (t) => {
  const estates: Estate[] = [];
  for (const kind of ['demo', 'empty', 'down'] as const) {
    const dir = await estateDir(t, kind);
    estates.push({ name: kind, key: await newKey(dir, 'alice'), server: await startServer(t, dir) });
  }
  const docResponse = await (estates[0] as Estate).server.get('/api/openapi.json');
  assert.equal(docResponse.status, 200);
  const doc = docResponse.json as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addSchema(doc, 'openapi.json');

  const observed: Observed[] = [];
  const check = async (estate: Estate, op: Route, probe: string, r: TestResponse) => {
    const where = `${op.method} ${op.path} (${probe}, ${estate.name} estate)`;
    observed.push({ estate: estate.name, route: op, probe, status: r.status });
    await t.test(`${where} → ${r.status}`, () => {
      const operation = doc.paths[op.path]?.[op.method.toLowerCase()] as Json | undefined;
      assert.ok(operation, `${where}: not in the document`);
      assert.equal(operation.operationId, operationId(op));
      let response = operation.responses[String(r.status)] as Json | undefined;
      assert.ok(response, `${where}: status ${r.status} is not documented (documented: ${Object.keys(operation.responses).join(', ')}); body: ${r.text.slice(0, 300)}`);
      let pointer = `#/paths/${op.path.replace(/~/g, '~0').replace(/\//g, '~1')}/${op.method.toLowerCase()}/responses/${r.status}`;
      if (response.$ref) {
        pointer = response.$ref as string;
        response = doc.components.responses[pointer.split('/').pop() as string] as Json;
      }
      if (!response.content) {
        assert.equal(r.text, '', `${where}: documented without a body, but one came`);
        return;
      }
      const [mediaType] = Object.keys(response.content) as [string];
      assert.equal(r.headers.get('content-type')?.split(';')[0], mediaType, `${where}: content type`);
      if (mediaType !== 'application/json') return;
      const validate = ajv.getSchema(`openapi.json${pointer}/content/application~1json/schema`);
      assert.ok(validate, `${where}: no schema at ${pointer}`);
      assert.ok(validate(r.json), `${where}: body does not match its schema: ${ajv.errorsText(validate.errors)}\n${r.text.slice(0, 500)}`);
    });
  };

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
        const tooBig = JSON.stringify({ padding: 'x'.repeat(1024 * 1024) });
        await check(estate, op, 'body over 1 MiB', await estate.server.request(op.method, urlOf(op, values), { headers: auth, body: tooBig }));
        await check(estate, op, 'body not JSON', await estate.server.request(op.method, urlOf(op, values), { headers: auth, body: '{"title": ' }));
      }
    }
    for (const route of PAGE_ROUTE_DOCS) {
      await check(estate, route, 'public route', await answer(estate.server, route.path, route.produces));
      const bad = estate.name === 'demo' ? badInput(route, false, doc) : undefined;
      if (bad?.query) await check(estate, route, 'invalid input', await answer(estate.server, `${route.path}?${bad.query}`, route.produces));
    }
  }

  await t.test('every operation succeeded at least once, and every probe got the status it aims at', () => {
    for (const op of [...operations, ...PAGE_ROUTE_DOCS]) {
      const mine = observed.filter((o) => o.route.id === op.id);
      assert.ok(mine.some((o) => o.status >= 200 && o.status < 300), `${op.id}: no 2xx answer (${mine.map((o) => `${o.estate}/${o.probe}: ${o.status}`).join(', ')}); add a sample input`);
    }
    const aims: Record<string, number> = { 'no credential': 403, 'invalid credential': 403, 'invalid input': 422, 'body over 1 MiB': 413, 'body not JSON': 422 };
    for (const o of observed) {
      const aim = aims[o.probe];
      if (aim !== undefined) assert.equal(o.status, aim, `${o.route.id}: ${o.probe}`);
    }
  });

  await t.test('the error probes reached every kind of documented error response', () => {
    const statuses = new Set(observed.map((o) => o.status));
    for (const s of [403, 404, 409, 413, 422, 502, 503, 504]) assert.ok(statuses.has(s), `no operation answered ${s}`);
  });
});
