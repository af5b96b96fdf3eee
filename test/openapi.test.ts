import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { z } from 'zod';
import { defineOperation } from '../src/api/define-operation.ts';
import { buildOpenApi, operationId } from '../src/api/openapi.ts';
import { operations } from '../src/api/operations/index.ts';
import { PAGE_ROUTE_DOCS } from '../src/server/docs-routes.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { startServer } from './helpers/server.ts';

type Json = Record<string, any>;

/** Any one carrier, each naming the scope the route needs. */
const credentials = (scope: string) => [{ ApiKeyHeader: [scope] }, { ApiKeyQuery: [scope] }, { BearerAuth: [scope] }];

async function servedDocument(t: Parameters<typeof tempDataDir>[0]) {
  const server = await startServer(t, await tempDataDir(t));
  const r = await server.get('/api/openapi.json');
  assert.equal(r.status, 200);
  return { server, r, doc: r.json as Json };
}

/** Every operation object of the document, with its path and method. */
function eachOperation(doc: Json): { path: string; method: string; operation: Json }[] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) => Object.entries(item as Json).map(([method, operation]) => ({ path, method, operation: operation as Json })));
}

/** Every JSON Schema the document embeds: parameters, bodies, responses, components. */
function eachSchema(doc: Json): [string, Json][] {
  const out: [string, Json][] = Object.entries(doc.components.schemas as Json).map(([n, s]) => [`components.schemas.${n}`, s as Json]);
  for (const [n, r] of Object.entries(doc.components.responses as Json)) if ((r as Json).content) out.push([`components.responses.${n}`, (r as Json).content['application/json'].schema]);
  for (const [n, h] of Object.entries({ ...doc.components.headers, ...doc.components.parameters } as Json)) out.push([`components ${n}`, (h as Json).schema]);
  for (const { path, method, operation } of eachOperation(doc)) {
    for (const p of operation.parameters ?? []) if (!p.$ref) out.push([`${method} ${path} ${p.name}`, p.schema]);
    if (operation.requestBody) out.push([`${method} ${path} body`, operation.requestBody.content['application/json'].schema]);
    for (const [status, r] of Object.entries(operation.responses as Json)) {
      for (const [type, media] of Object.entries(((r as Json).content ?? {}) as Json)) out.push([`${method} ${path} ${status} ${type}`, (media as Json).schema]);
    }
  }
  return out;
}

test('/api/openapi.json is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)', async (t) => {
  const { doc, r } = await servedDocument(t);
  assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  assert.match(doc.openapi, /^3\.1\.\d+$/);
  assert.equal(doc.info.version, '1.0.0');
  const result = await new Validator().validate(doc);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  const broken = structuredClone(doc);
  broken.paths['/trends'].get.responses = 'none';
  assert.equal((await new Validator().validate(broken)).valid, false, 'the validator tells a broken document');
});

test('every embedded schema is valid JSON Schema 2020-12, with no $schema or $defs of its own', async (t) => {
  const { doc } = await servedDocument(t);
  const ajv = new Ajv2020({ strict: false });
  const schemas = eachSchema(doc);
  assert.ok(schemas.length > operations.length);
  for (const [where, schema] of schemas) {
    assert.ok(ajv.validateSchema(schema), `${where}: ${ajv.errorsText(ajv.errors)}`);
    assert.ok(!JSON.stringify(schema).includes('"$schema"'), `${where} embeds $schema`);
    assert.ok(!JSON.stringify(schema).includes('"$defs"'), `${where} embeds $defs`);
  }
});

test('the document has exactly the routes of the operations table and the pages beside it, each with a unique operationId and a tag', async (t) => {
  const { doc } = await servedDocument(t);
  const documented = eachOperation(doc).map(({ path, method }) => `${method.toUpperCase()} ${path}`).sort();
  assert.deepEqual(documented, [...operations, ...PAGE_ROUTE_DOCS].map((op) => `${op.method} ${op.path}`).sort());
  for (const route of PAGE_ROUTE_DOCS) {
    const operation = doc.paths[route.path][route.method.toLowerCase()];
    if (route.output) assert.ok(operation.responses['200'].content['application/json'].schema, route.path);
    else assert.deepEqual(operation.responses['200'].content, { [route.produces]: { schema: { type: 'string' } } }, route.path);
    if (route.access === 'public') assert.deepEqual(operation.security, [], route.path);
    else assert.equal(operation['x-required-scope'], route.scope ?? 'read', route.path);
  }
  for (const path of ['/status', '/hq/work']) assert.ok(doc.paths[path]?.get, `the seed's ${path} is documented`);
  const ids = eachOperation(doc).map(({ operation }) => operation.operationId);
  assert.equal(new Set(ids).size, ids.length);
  for (const op of operations) {
    const operation = doc.paths[op.path][op.method.toLowerCase()];
    assert.equal(operation.operationId, operationId(op));
    assert.match(operation.operationId, /^[A-Za-z0-9_]+$/);
    assert.deepEqual(operation.tags, [op.tag]);
    assert.equal(operation.summary, op.summary);
  }
  assert.deepEqual(doc.tags.map((tag: Json) => tag.name), [...new Set([...operations, ...PAGE_ROUTE_DOCS].map((op) => op.tag))]);
});

test('parameters carry their types, defaults, bounds and enums', async (t) => {
  const { doc } = await servedDocument(t);
  const param = (path: string, name: string) => (doc.paths[path].get.parameters as Json[]).find((p) => p.name === name);
  const cases: [string, string, Json][] = [
    ['/trends', 'limit', { in: 'query', required: false, schema: { type: 'integer', default: 100, minimum: 1, maximum: 1000 } }],
    ['/events', 'limit', { in: 'query', required: false, schema: { type: 'integer', default: 50, minimum: 1, maximum: 1000 } }],
    ['/builds', 'days', { in: 'query', required: false, schema: { type: 'integer', default: 7, minimum: 1, maximum: 365 } }],
    ['/state/{file_name}', 'max_chars', { in: 'query', required: false, schema: { type: 'integer', default: 5000, minimum: 1, maximum: 1_000_000 } }],
    ['/state/{file_name}', 'file_name', { in: 'path', required: true, schema: { type: 'string', enum: ['scoreboard', 'heartbeat', 'estate_map'] } }],
  ];
  for (const [path, name, expected] of cases) {
    await t.test(`${path} ${name}`, () => {
      const p = param(path, name);
      assert.ok(p, `${path} has no parameter ${name}`);
      assert.equal(p.in, expected.in);
      assert.equal(p.required, expected.required);
      for (const [k, v] of Object.entries(expected.schema as Json)) assert.deepEqual(p.schema[k], v, `${path} ${name} schema.${k}`);
      assert.equal(typeof p.description, 'string');
    });
  }
  for (const op of operations) {
    const params = (doc.paths[op.path][op.method.toLowerCase()].parameters ?? []) as Json[];
    const inPath = params.filter((p) => p.in === 'path').map((p) => p.name);
    assert.deepEqual(inPath, [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]), `${op.id} path parameters`);
    assert.ok(params.every((p) => p.name !== 'api_key'), 'api_key is a security scheme, not a parameter');
  }
});

test('security: the three credential carriers, on exactly the protected routes and the user routes that write; optional on user reads', async (t) => {
  const { doc } = await servedDocument(t);
  assert.deepEqual(doc.components.securitySchemes.ApiKeyHeader, { type: 'apiKey', in: 'header', name: 'X-API-Key', description: doc.components.securitySchemes.ApiKeyHeader.description });
  assert.equal(doc.components.securitySchemes.ApiKeyQuery.in, 'query');
  assert.equal(doc.components.securitySchemes.ApiKeyQuery.name, 'api_key');
  assert.equal(doc.components.securitySchemes.BearerAuth.type, 'http');
  assert.equal(doc.components.securitySchemes.BearerAuth.scheme, 'bearer');
  assert.equal(doc.security, undefined, 'no document-wide default: every operation says');
  for (const op of operations) {
    const operation = doc.paths[op.path][op.method.toLowerCase()];
    const needed = op.access === 'protected' || (op.access === 'user' && op.method !== 'GET');
    const scope = op.path === '/ingest' ? 'ingest' : op.method === 'GET' ? 'read' : 'write';
    const expected = op.access === 'public' ? [] : needed ? credentials(scope) : [...credentials(scope), {}];
    assert.deepEqual(operation.security, expected, `${op.id} (${op.access})`);
    assert.equal(operation['x-required-scope'], op.access === 'public' ? undefined : scope, `${op.id} x-required-scope`);
    assert.equal('403' in operation.responses, op.access !== 'public', `${op.id}: 403 documented iff a credential is read`);
  }
  const seedProtected = ['/trends', '/disk', '/health/pulse', '/builds', '/events', '/state', '/stats', '/providers', '/repos', '/summary'];
  for (const path of seedProtected) if (doc.paths[path]) assert.deepEqual(doc.paths[path].get.security, credentials('read'), path);
  for (const path of ['/', '/healthz', '/health']) assert.deepEqual(doc.paths[path].get.security, [], path);
});

test('responses: real success schemas, and 403/404/413/422 with the shared error components', async (t) => {
  const { doc } = await servedDocument(t);
  const { schemas, responses } = doc.components;
  assert.deepEqual(schemas.HTTPValidationError.properties.detail, { type: 'array', items: { $ref: '#/components/schemas/ValidationError' } });
  assert.deepEqual(Object.keys(schemas.ValidationError.properties), ['loc', 'msg', 'type']);
  assert.deepEqual(schemas.ValidationError.required, ['loc', 'msg', 'type']);
  assert.deepEqual(schemas.ErrorResponse.required, ['detail']);
  assert.deepEqual(responses.UnprocessableEntity.content['application/json'].schema, { $ref: '#/components/schemas/HTTPValidationError' });
  for (const name of ['Forbidden', 'NotFound', 'PayloadTooLarge']) {
    assert.deepEqual(responses[name].content['application/json'].schema, { $ref: '#/components/schemas/ErrorResponse' }, name);
  }
  for (const op of operations) {
    const r = doc.paths[op.path][op.method.toLowerCase()].responses as Json;
    const success = r[String(op.status)];
    assert.ok(success, `${op.id}: ${op.status} documented`);
    if (op.status === 204) assert.equal(success.content, undefined, `${op.id}: 204 has no body`);
    else if (op.produces === 'text/html') assert.deepEqual(success.content, { 'text/html': { schema: { type: 'string' } } });
    else {
      const schema = success.content['application/json'].schema;
      assert.ok(Object.keys(schema).some((k) => ['type', 'anyOf', 'oneOf', 'enum', '$ref', 'const'].includes(k)), `${op.id}: success schema is not {}: ${JSON.stringify(schema)}`);
    }
    const hasInput = Boolean(op.input.path || op.input.query || op.input.body);
    assert.equal('422' in r, hasInput, `${op.id}: 422 iff it takes input`);
    assert.equal('413' in r, Boolean(op.input.body), `${op.id}: 413 iff it takes a body`);
    for (const s of op.errors) assert.ok(String(s) in r, `${op.id}: ${s} documented`);
    if (op.input.body) assert.equal(doc.paths[op.path][op.method.toLowerCase()].requestBody.required, true);
  }
  assert.equal(doc.paths['/trends/latest'].get.responses['404'].$ref, '#/components/responses/NotFound');
  assert.deepEqual(doc.paths['/trends'].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/TrendPointPage' });
  assert.deepEqual(schemas.TrendPointPage.required, ['items', 'count', 'limit', 'skipped_lines']);
});

test('buildOpenApi: request bodies use the input schema, responses the output schema, $defs move to components', () => {
  const shared = z.object({ name: z.string() }).meta({ id: 'Named' });
  const op = defineOperation({
    id: 'things.create',
    method: 'POST',
    path: '/things/{kind}',
    access: 'protected',
    tag: 'things',
    summary: 'Create a thing',
    input: {
      path: z.object({ kind: z.enum(['a', 'b']) }),
      body: z.strictObject({ title: z.string().max(10), size: z.int().min(1).default(3), owner: shared }),
    },
    output: z.object({ title: z.string(), size: z.int(), owner: shared }),
    status: 201,
    replies: [200],
    errors: [409],
    handler: () => ({ title: 't', size: 3, owner: { name: 'n' } }),
    cli: false,
  });
  const doc = buildOpenApi([op]) as unknown as Json;
  const operation = doc.paths['/things/{kind}'].post;
  const body = operation.requestBody.content['application/json'].schema;
  assert.deepEqual(body.required, ['title', 'owner'], 'a defaulted field is optional in the input');
  assert.equal(body.additionalProperties, false);
  assert.equal(body.properties.title.maxLength, 10);
  assert.deepEqual(body.properties.owner, { $ref: '#/components/schemas/Named' });
  assert.deepEqual(doc.components.schemas.Named.required, ['name']);
  const out = operation.responses['201'].content['application/json'].schema;
  assert.deepEqual(out.required, ['title', 'size', 'owner'], 'every output field is there');
  assert.deepEqual(out.properties.owner, { $ref: '#/components/schemas/NamedOutput' }, 'the output variant of a shared schema has its own name');
  assert.equal(doc.components.schemas.NamedOutput.additionalProperties, false);
  assert.deepEqual(operation.responses['200'].content, operation.responses['201'].content, 'a replay status has the same body');
  assert.deepEqual(Object.keys(operation.responses), ['200', '201', '403', '405', '409', '413', '415', '422', '429', '503'], 'every route documents 405, every rate-limited one 429, every body 415, every one that reads the data dir or a store 503');
  assert.equal(operation.responses['409'].$ref, '#/components/responses/Conflict');
  assert.equal(operation.operationId, 'things_create');
  assert.equal(out.properties.size.maximum, undefined, 'the safe-integer bound of z.int() is left out');
});

test('the document is cached and revalidated: ETag, 304, HEAD, gzip', async (t) => {
  const { server, r } = await servedDocument(t);
  const etag = r.headers.get('etag');
  assert.match(etag ?? '', /^"[\w-]+"$/);
  assert.equal(r.headers.get('cache-control'), 'no-cache');
  const again = await server.get('/api/openapi.json', { 'If-None-Match': etag as string });
  assert.equal(again.status, 304);
  assert.equal(again.text, '');
  const head = await server.request('HEAD', '/api/openapi.json');
  assert.equal(head.status, 200);
  assert.equal(head.text, '');
  const res = await fetch(`${server.url}/api/openapi.json`, { headers: { 'Accept-Encoding': 'gzip' } });
  assert.equal(res.headers.get('content-encoding'), 'gzip');
  assert.deepEqual(await res.json(), r.json);
  const post = await server.request('POST', '/api/openapi.json');
  assert.equal(post.status, 405);
  assert.equal(post.headers.get('allow'), 'GET, HEAD');
});

test('estate openapi prints the served document, without a server or a data dir', async (t) => {
  const { doc } = await servedDocument(t);
  const cli = await runEstate(['openapi']);
  assert.equal(cli.code, 0, cli.stderr);
  assert.deepEqual(cli.json, doc);
  const compact = await runEstate(['openapi', '--compact']);
  assert.equal(compact.stdout.trim().split('\n').length, 1);
  assert.deepEqual(JSON.parse(compact.stdout), doc);
});
