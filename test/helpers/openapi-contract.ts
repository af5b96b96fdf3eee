import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Operation } from '../../src/api/define-operation.ts';
import { operationId } from '../../src/api/openapi.ts';
import { DEMO_FIXTURE, tempDataDir } from './data-dir.ts';
import { fakeIssues, refusedUrl, startAnswering, startFakeForge, startHanging } from './fake-upstreams.ts';
import { readResponse, type TestResponse, type TestServer } from './server.ts';

// What the OpenAPI contract test (test/openapi-contract.test.ts) needs: sample
// inputs read from the document, the estates it calls, and the check of one
// answer against the document (status, content type, body, headers).

export type Json = Record<string, any>;

/** What the checks need of an operation or of a route served beside the table. */
export type Route = Pick<Operation, 'id' | 'method' | 'path'>;

export interface Estate {
  name: string;
  server: TestServer;
  key: string;
}

export interface Observed {
  estate: string;
  route: Route;
  probe: string;
  status: number;
}

/** A value for each required field of a request body schema. */
export function sampleBody(schema: Json | undefined): Json {
  const body: Json = {};
  for (const name of (schema?.required ?? []) as string[]) body[name] = sampleValue(schema?.properties?.[name] ?? {}, name);
  return body;
}

export function sampleValue(s: Json, name: string): unknown {
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

/** The parameters of `route` the document lists (shared header parameters, `$ref`s, left out). */
export function paramsOf(route: Route, doc: Json): Json[] {
  return ((doc.paths[route.path][route.method.toLowerCase()].parameters ?? []) as Json[]).filter((p) => !p.$ref);
}

/** Query/path/body inputs that break the operation's own schema (a 422), or undefined when it takes none that can be broken. */
export function badInput(op: Route, hasBody: boolean, doc: Json): { path?: Record<string, string>; query?: string; body?: string } | undefined {
  for (const p of paramsOf(op, doc)) {
    const s = p.schema as Json;
    const bad = s.type === 'integer' ? 'abc' : s.enum || s.pattern ? '!!!' : typeof s.maxLength === 'number' ? 'x'.repeat(s.maxLength + 1) : undefined;
    if (bad === undefined) continue;
    if (p.in === 'path') return { path: { [p.name]: bad } };
    return { query: `${p.name}=${encodeURIComponent(bad)}` };
  }
  if (hasBody) return { body: JSON.stringify({ not_a_field_of_this_body: 1 }) };
  return undefined;
}

export function urlOf(op: Route, values: Record<string, string>, query = ''): string {
  const p = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name] ?? 'sample'));
  return query ? `${p}?${query}` : p;
}

/** A GET of a page or an event stream: a stream is read up to its headers, then dropped. */
export async function answer(server: TestServer, route: string, produces: string, headers: Record<string, string> = {}): Promise<TestResponse> {
  if (produces !== 'text/event-stream') return server.get(route, headers);
  const abort = new AbortController();
  const res = await fetch(server.url + route, { headers, signal: abort.signal });
  if (res.headers.get('content-type')?.startsWith('text/event-stream')) {
    abort.abort();
    return { status: res.status, headers: res.headers, text: '', json: undefined };
  }
  return readResponse(res);
}

/**
 * The data dir of an estate: `demo` (the fixture, with a fake forge, provider and
 * stats command that answer), `empty`, `down` (sources that fail or hang), or
 * `limited` (empty, with a rate limit of one request a minute, loopback included).
 */
/** The environment the contract's servers run with: the secret of their notify target (`contract-hook`). */
export const CONTRACT_ENV: NodeJS.ProcessEnv = { CONTRACT_HOOK_SECRET: `whsec_${Buffer.alloc(24, 7).toString('base64')}` };

export async function estateDir(t: TestContext, kind: 'demo' | 'empty' | 'down' | 'limited'): Promise<string> {
  if (kind === 'empty') return tempDataDir(t);
  if (kind === 'limited') {
    const dir = await tempDataDir(t);
    await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ serve: { rate_limit: { requests_per_minute: 1, burst: 1, exempt_loopback: false } } }));
    return dir;
  }
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const configFile = path.join(dir, 'estate.config.json');
  const config = JSON.parse(await readFile(configFile, 'utf8')) as Json;
  if (kind === 'demo') {
    const forge = await startFakeForge(t, { repos: 3, issues: { 'org/repo-001': fakeIssues(5) } });
    const provider = await startAnswering(t, 200, { models: [] });
    config.forge = { url: forge.url, timeout_ms: 5000, cache_s: 0 };
    config.providers = [{ name: 'fake', url: `${provider.url}/api/tags`, timeout_ms: 5000, expect_status: 200 }];
    config.stats = { command: [process.execPath, '-e', 'process.stdout.write(JSON.stringify({ visitors: 42 }))'], timeout_ms: 10_000, cache_s: 0 };
    const hook = await startAnswering(t, 204);
    config.notify = [{ name: 'contract-hook', url: `${hook.url}/hook`, secret_env: 'CONTRACT_HOOK_SECRET' }];
  } else {
    const hanging = await startHanging(t);
    config.forge = { url: hanging.url, timeout_ms: 200, cache_s: 0 };
    config.providers = [{ name: 'gone', url: await refusedUrl(), timeout_ms: 500 }];
    config.stats = { command: [process.execPath, '-e', 'process.stdout.write("not json")'], timeout_ms: 10_000, cache_s: 0 };
    config.notify = [{ name: 'contract-hook', url: `${hanging.url}/hook`, secret_env: 'CONTRACT_HOOK_SECRET', timeout_ms: 200 }];
  }
  await writeFile(configFile, JSON.stringify(config));
  return dir;
}

/** Every header name the document declares on some response (X-Request-Id, ETag, Retry-After, Allow, Location). */
function declaredHeaderNames(doc: Json): Set<string> {
  const responses = [...Object.values(doc.components?.responses ?? {}), ...Object.values(doc.paths).flatMap((item) => Object.values(item as Json).flatMap((o) => Object.values((o as Json).responses ?? {})))];
  return new Set((responses as Json[]).flatMap((r) => Object.keys(r.headers ?? {}).map((name) => name.toLowerCase())));
}

/** An RFC 3339 date-time (`format: date-time`): `2026-11-21T12:00:00.000Z`, `2026-11-21T13:00:00+01:00`. */
const RFC_3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i;

/** `#/components/headers/ETag` in `doc`. */
function resolve(doc: Json, ref: string): Json {
  return ref
    .slice(2)
    .split('/')
    .reduce((node: Json, part) => node[part.replace(/~1/g, '/').replace(/~0/g, '~')] as Json, doc);
}

/**
 * The checks of answers against the document, each a subtest of `t`: the status
 * is listed for the route (or is the shared response named), the content type
 * and body match it, every header it declares `required` is sent, every declared
 * header sent matches its schema, no header the document declares elsewhere is
 * sent undeclared, and a `Location` reads back with 200 (with the estate's key).
 * Every answer checked is recorded in `observed`.
 */
export function contractChecker(t: TestContext, doc: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  // The formats the document uses, checked (Ajv alone ignores formats it does not know).
  ajv.addFormat('date-time', (s: string) => RFC_3339.test(s) && !Number.isNaN(Date.parse(s)));
  ajv.addFormat('uri', (s: string) => /^[a-z][a-z\d+.-]*:/i.test(s) && URL.canParse(s));
  ajv.addSchema(doc, 'openapi.json');
  const documented = declaredHeaderNames(doc);
  const observed: Observed[] = [];

  const headersMatch = (where: string, response: Json, pointer: string, r: TestResponse) => {
    const declared = (response.headers ?? {}) as Json;
    for (const [name, given] of Object.entries(declared) as [string, Json][]) {
      const at = (given.$ref as string | undefined) ?? `${pointer}/headers/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      const header = given.$ref ? resolve(doc, given.$ref) : given;
      const value = r.headers.get(name);
      if (value === null) {
        assert.notEqual(header.required, true, `${where}: header ${name} is required for ${r.status} but was not sent`);
        continue;
      }
      const validate = ajv.getSchema(`openapi.json${at}/schema`);
      assert.ok(validate, `${where}: no schema for header ${name} at ${at}`);
      // Headers are text: an integer schema (Retry-After) is read as the number the digits spell.
      const numeric = /^(integer|number)$/.test(String(header.schema?.type)) && /^-?\d+(\.\d+)?$/.test(value);
      assert.ok(validate(numeric ? Number(value) : value), `${where}: header ${name}: ${JSON.stringify(value)} does not match its schema: ${ajv.errorsText(validate.errors)}`);
    }
    const names = new Set(Object.keys(declared).map((n) => n.toLowerCase()));
    for (const name of documented) assert.ok(!r.headers.has(name) || names.has(name), `${where}: sends ${name}, which the document does not declare for ${r.status}`);
  };

  /** `r` against `response` (inline at `pointer`, or a `$ref`). */
  const matches = (where: string, given: Json, givenPointer: string, r: TestResponse) => {
    const pointer = (given.$ref as string | undefined) ?? givenPointer;
    const response = given.$ref ? resolve(doc, given.$ref) : given;
    headersMatch(where, response, pointer, r);
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
  };

  /** `r`, the answer of `route` to `probe` in `estate`, against the response the document lists for its status. */
  const check = async (estate: Estate, route: Route, probe: string, r: TestResponse) => {
    const where = `${route.method} ${route.path} (${probe}, ${estate.name} estate)`;
    observed.push({ estate: estate.name, route, probe, status: r.status });
    await t.test(`${where} → ${r.status}`, async () => {
      const operation = doc.paths[route.path]?.[route.method.toLowerCase()] as Json | undefined;
      assert.ok(operation, `${where}: not in the document`);
      assert.equal(operation.operationId, operationId(route));
      const response = operation.responses[String(r.status)] as Json | undefined;
      assert.ok(response, `${where}: status ${r.status} is not documented (documented: ${Object.keys(operation.responses).join(', ')}); body: ${r.text.slice(0, 300)}`);
      matches(where, response, `#/paths/${route.path.replace(/~/g, '~0').replace(/\//g, '~1')}/${route.method.toLowerCase()}/responses/${r.status}`, r);
      const location = r.headers.get('location');
      if (location === null) return;
      const back = await estate.server.get(location, { 'X-API-Key': estate.key });
      observed.push({ estate: estate.name, route, probe: 'Location read back', status: back.status });
      assert.equal(back.status, 200, `${where}: Location ${location} reads back with ${back.status}: ${back.text.slice(0, 300)}`);
    });
  };

  /** `r`, an answer no operation gives (an unknown path, a method a path lacks), against `components.responses[name]`. */
  const checkShared = async (estate: Estate, route: Route, probe: string, name: string, r: TestResponse) => {
    const where = `${route.method} ${route.path} (${probe}, ${estate.name} estate)`;
    observed.push({ estate: estate.name, route, probe, status: r.status });
    await t.test(`${where} → ${r.status} (${name})`, () => {
      const response = doc.components.responses[name] as Json | undefined;
      assert.ok(response, `${where}: no components.responses.${name}`);
      matches(where, response, `#/components/responses/${name}`, r);
    });
  };

  return { observed, check, checkShared };
}
