import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createKey } from '../src/core/keys/key-store.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { answer } from './helpers/openapi-contract.ts';
import { startServer, type TestResponse, type TestServer } from './helpers/server.ts';

// What the served document says of each operation's credentials, checked
// against the live server: anonymous calls are refused (403) exactly where
// the security requirements have no `{}`; the scope a route declares (its
// requirements' scopes and `x-required-scope`, which must agree) is the one a
// read-only and a write-only key are let through or refused by.

type Json = Record<string, any>;

const MISSING_RUN = 'run_0000000000000000';

/** One call; an event stream is read up to its headers, then dropped. */
async function call(server: TestServer, method: string, route: string, produces: string | undefined, headers: Record<string, string>): Promise<TestResponse> {
  if (produces === 'text/event-stream') return answer(server, route, produces, headers);
  return server.request(method, route, method === 'GET' || method === 'DELETE' ? { headers } : { headers, body: {} });
}

test('every operation: declared security and scope match the live answers to no credential, a read-only key and a write-only key', async (t) => {
  const dir = await tempDataDir(t);
  const readOnly = (await createKey(dir, { userId: 'reader', scopes: ['read'] })).key;
  const writeOnly = (await createKey(dir, { userId: 'writer', scopes: ['write'] })).key;
  const metricsOnly = (await createKey(dir, { userId: 'scraper', scopes: ['metrics'] })).key;
  const server = await startServer(t, dir);
  const doc = (await server.get('/api/openapi.json')).json as Json;
  const schemes = Object.keys(doc.components.securitySchemes);
  const seen = { anonymousRefused: 0, read: 0, write: 0, ingest: 0, metrics: 0, public: 0 };
  for (const [route, item] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
    for (const [verb, op] of Object.entries(item)) {
      const method = verb.toUpperCase();
      const where = `${method} ${route}`;
      const security = op.security as Json[];
      const url = route.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'run_id' ? MISSING_RUN : 'sample'));
      const produces = Object.keys((op.responses?.['200']?.content ?? {}) as Json)[0];
      const anonymousAllowed = security.length === 0 || security.some((s) => Object.keys(s).length === 0);

      const anonymous = await call(server, method, url, produces, {});
      if (anonymousAllowed) assert.notEqual(anonymous.status, 403, `${where} declares anonymous calls allowed: ${anonymous.text.slice(0, 200)}`);
      else assert.equal(anonymous.status, 403, `${where} declares a credential needed: ${anonymous.status} ${anonymous.text.slice(0, 200)}`);
      if (!anonymousAllowed) seen.anonymousRefused++;

      const scope = op['x-required-scope'] as string | undefined;
      if (security.length === 0) {
        assert.equal(scope, undefined, `${where}: public, so no scope`);
        assert.equal('403' in op.responses, false, `${where}: public, so no 403`);
        seen.public++;
        continue;
      }
      assert.ok(
        scope === 'read' || scope === 'write' || (scope === 'ingest' && where === 'POST /ingest') || (scope === 'metrics' && where === 'GET /metrics'),
        `${where}: x-required-scope ${String(scope)}`,
      );
      for (const requirement of security.filter((s) => Object.keys(s).length > 0)) {
        assert.deepEqual(Object.keys(requirement), [Object.keys(requirement)[0]], `${where}: one scheme per requirement (any one carrier will do)`);
        const [scheme, scopes] = Object.entries(requirement)[0] as [string, string[]];
        assert.ok(schemes.includes(scheme), `${where}: ${scheme} is a declared scheme`);
        assert.deepEqual(scopes, [scope], `${where}: ${scheme} lists the x-required-scope`);
      }
      assert.deepEqual(
        security.filter((s) => Object.keys(s).length > 0).map((s) => Object.keys(s)[0]).sort(),
        [...schemes].sort(),
        `${where}: every carrier is accepted`,
      );
      assert.ok('403' in op.responses, `${where}: reads a credential, so 403 is documented`);

      const byReader = await call(server, method, url, produces, { 'X-API-Key': readOnly });
      const byWriter = await call(server, method, url, produces, { 'X-API-Key': writeOnly });
      const byScraper = await call(server, method, url, produces, { 'X-API-Key': metricsOnly });
      // A `metrics` key opens GET /metrics, and nothing else; `read` opens it too.
      if (scope === 'metrics') {
        assert.equal(byScraper.status, 200, `${where}: a metrics key is let through`);
        assert.equal(byReader.status, 200, `${where}: a read key is let through`);
        assert.equal(byWriter.status, 403, `${where}: a write key is refused`);
        assert.match(String(byWriter.json?.detail), /lacks the "metrics" scope/, where);
        seen.metrics++;
        continue;
      }
      assert.equal(byScraper.status, 403, `${where}: a metrics key opens nothing else`);
      // `write` opens the `ingest` route too (DESIGN.md 7a).
      const [allowed, refused] = scope === 'read' ? [byReader, byWriter] : [byWriter, byReader];
      assert.notEqual(allowed.status, 403, `${where} needs "${scope}": a key with only that scope is let through: ${allowed.text.slice(0, 200)}`);
      assert.equal(refused.status, 403, `${where} needs "${scope}": a key without it is refused`);
      assert.match(String(refused.json?.detail), new RegExp(`lacks the "${scope}" scope`), where);
      seen[scope as 'read' | 'write' | 'ingest']++;
    }
  }
  t.diagnostic(JSON.stringify(seen));
  assert.ok(seen.read >= 15 && seen.write >= 4 && seen.ingest === 1 && seen.metrics === 1 && seen.public >= 5 && seen.anonymousRefused >= 15, JSON.stringify(seen));
});

test('several credentials: only the first present of X-API-Key, Bearer, ?api_key is read; api_key sent twice is invalid', async (t) => {
  const dir = await tempDataDir(t);
  const key = (await createKey(dir, { userId: 'alice' })).key;
  const server = await startServer(t, dir);
  const doc = (await server.get('/api/openapi.json')).json as Json;
  for (const scheme of Object.values(doc.components.securitySchemes as Json)) assert.match(scheme.description, /only the first present of `X-API-Key`, `Authorization: Bearer`, `\?api_key=` is read/);
  const status = async (path: string, headers: Record<string, string> = {}) => (await server.get(path, headers)).status;
  assert.equal(await status('/trends', { 'X-API-Key': key, Authorization: 'Bearer not-a-key' }), 200, 'the header wins over Bearer');
  assert.equal(await status('/trends', { 'X-API-Key': 'not-a-key', Authorization: `Bearer ${key}` }), 403, 'an invalid header is not rescued by a valid Bearer');
  assert.equal(await status(`/trends?api_key=${key}`, { Authorization: 'Bearer not-a-key' }), 403, 'Bearer wins over the query');
  assert.equal(await status(`/trends?api_key=${key}`), 200);
  assert.equal(await status(`/trends?api_key=${key}&api_key=${key}`), 403, 'api_key twice names no one credential');
  assert.equal(await status(`/publishing/latest?api_key=a&api_key=b`), 200, 'a public route ignores credentials');
});
