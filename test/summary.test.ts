import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { operations } from '../src/api/operations/index.ts';
import { BIN, cliEnv } from './helpers/cli.ts';
import { DEMO_FIXTURE, liveDemoDataDir, tempDataDir } from './helpers/data-dir.ts';
import { startAnswering, startFakeForge, startHanging } from './helpers/fake-upstreams.ts';
import { newKey, startServer } from './helpers/server.ts';
import { PATIENCE_MS } from './helpers/wait-until.ts';

const TIMEOUT_MS = 300;
const LOCAL_SECTIONS = ['pulse', 'trends', 'disk', 'builds', 'events', 'work', 'publishing', 'ledger'];

/** The demo estate with its external sources replaced by `sources`. */
async function demoWith(t: Parameters<typeof tempDataDir>[0], sources: object) {
  const dir = await liveDemoDataDir(t);
  const config = JSON.parse(await readFile(path.join(dir, 'estate.config.json'), 'utf8')) as Record<string, unknown>;
  delete config.forge;
  delete config.providers;
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ ...config, ...sources }));
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  return { dir, get: (route: string) => server.get(route, { 'X-API-Key': key }) };
}

test('/summary answers 200 with every other section intact while the forge hangs', async (t) => {
  const [forge, provider] = await Promise.all([startHanging(t), startAnswering(t, 200)]);
  const { get } = await demoWith(t, {
    forge: { url: forge.url, timeout_ms: TIMEOUT_MS },
    providers: [{ name: 'llm', url: provider.url, timeout_ms: 5000 }],
    stats: { command: ['echo', '{"visitors": 7}'], timeout_ms: 5000 },
  });
  // The forge never answers: an answer at all is estate giving up on it at forge.timeout_ms, which the error names.
  const r = await get('/summary');
  assert.equal(r.status, 200, r.text);
  assert.ok(forge.requests.length > 0, 'the forge was asked');
  assert.deepEqual(r.json.forge, { error: r.json.forge.error, configured: true, repos: null, open_issues: null, archived: null });
  assert.match(r.json.forge.error, /^the forge at http:\/\/127\.0\.0\.1:\d+ did not answer within 300 ms/);
  for (const name of LOCAL_SECTIONS) assert.equal(r.json[name].error, null, `${name}: ${r.json[name].error}`);
  assert.equal(r.json.pulse.status, 'healthy');
  assert.equal(r.json.trends.latest.node, 'forge');
  assert.deepEqual(r.json.disk.mounts.map((m: { mount: string }) => m.mount), ['/', '/srv/models', '/var/lib/estate']);
  assert.ok(r.json.builds.total > 0);
  assert.equal(r.json.ledger.repos, 6);
  assert.ok(r.json.work.latest.task_id);
  assert.ok(r.json.publishing.latest.title);
  assert.deepEqual(r.json.providers, { error: null, configured: true, total: 1, reachable: 1, unreachable: [] });
  assert.deepEqual(r.json.stats, { error: null, configured: true, data: { visitors: 7 } });
  assert.equal(r.json.node, 'hub');
});

test('/summary: each failing source has its own error; unconfigured ones say so without one', async (t) => {
  const forge = await startFakeForge(t, { repos: 12 });
  const cases: [string, object, Record<string, unknown>][] = [
    [
      'forge up, stats failing',
      { forge: { url: forge.url }, stats: { command: [process.execPath, '-e', 'process.exit(4)'] } },
      { forge: { error: null, configured: true, repos: 12, open_issues: 21, archived: 2 }, stats: { error: /exited with code 4/, configured: true, data: null } },
    ],
    [
      'nothing configured',
      {},
      {
        forge: { error: null, configured: false, repos: null, open_issues: null, archived: null },
        providers: { error: null, configured: false, total: null, reachable: null, unreachable: null },
        stats: { error: null, configured: false, data: null },
      },
    ],
  ];
  for (const [name, sources, expected] of cases) {
    await t.test(name, async (t) => {
      const { get } = await demoWith(t, sources);
      const r = await get('/summary');
      assert.equal(r.status, 200, r.text);
      for (const [section, fields] of Object.entries(expected)) {
        for (const [field, value] of Object.entries(fields as Record<string, unknown>)) {
          if (value instanceof RegExp) assert.match(r.json[section][field], value, `${section}.${field}`);
          else assert.deepEqual(r.json[section][field], value, `${section}.${field}`);
        }
      }
      for (const s of LOCAL_SECTIONS) assert.equal(r.json[s].error, null);
    });
  }
});

test('/summary: a broken local log fails only its own section', async (t) => {
  const { dir, get } = await demoWith(t, {});
  await writeFile(path.join(dir, 'repos.json'), '{ not json');
  const r = await get('/summary');
  assert.equal(r.status, 200);
  assert.match(r.json.ledger.error, /repos\.json is not valid JSON/);
  assert.equal(r.json.ledger.repos, null);
  assert.equal(r.json.pulse.error, null);
});

test('the demo estate (forge and provider unreachable on purpose) answers every route without a server error', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const config = JSON.parse(await readFile(path.join(dir, 'estate.config.json'), 'utf8'));
  assert.ok(config.forge && config.providers.length > 0 && !config.stats, 'the demo config names unreachable sources');
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const expected: Record<string, number> = { '/forgejo-proxy/repos': 502, '/stats': 503 };
  const routes = operations.filter((op) => op.method === 'GET' && !op.path.includes('{')).map((op) => op.path);
  assert.ok(routes.includes('/summary') && routes.includes('/api/garden') && routes.includes('/estate/agents'));
  for (const route of routes) {
    await t.test(route, async () => {
      const r = await server.get(route, { 'X-API-Key': key });
      assert.equal(r.status, expected[route] ?? 200, `${route}: ${r.text.slice(0, 300)}`);
    });
  }
  const summary = await server.get('/summary', { 'X-API-Key': key });
  assert.match(summary.json.forge.error, /127\.0\.0\.1:2 is unreachable: connect ECONNREFUSED/);
  assert.deepEqual(summary.json.providers.unreachable, ['ollama']);
  assert.equal(summary.json.stats.configured, false);
});

test('npm start (estate serve --demo) serves /summary, /api/garden, /estate/agents and /estate/status', async (t) => {
  const child = spawn(process.execPath, [BIN, 'serve', '--demo', '--port', '0'], { env: cliEnv() });
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const ready = await new Promise<{ url: string; key: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready: ${out}`)), PATIENCE_MS);
    const on = (chunk: Buffer) => {
      out += chunk.toString();
      const url = /http:\/\/127\.0\.0\.1:\d+/.exec(out)?.[0];
      const key = /demo key \(user "demo"\): (\S+)/.exec(out)?.[1];
      if (url && key) {
        clearTimeout(timer);
        resolve({ url, key });
      }
    };
    child.stdout.on('data', on);
    child.stderr.on('data', on);
    void exited.then((code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
  for (const route of ['/summary', '/api/garden', '/estate/agents', '/estate/status', '/repos', '/providers']) {
    const r = await fetch(ready.url + route, { headers: { 'X-API-Key': ready.key }, signal: AbortSignal.timeout(PATIENCE_MS) });
    assert.equal(r.status, 200, `${route}: ${await r.text()}`);
  }
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
  assert.doesNotMatch(out, /"level":"error"/, 'no internal error was logged');
});
