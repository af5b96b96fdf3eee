import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { tempDataDir } from './helpers/data-dir.ts';
import { refusedUrl, startFakeForge, startHanging } from './helpers/fake-upstreams.ts';
import { newKey, startServer } from './helpers/server.ts';

const LEDGER = [
  { name: 'org/repo-002', url: 'https://git.example.org/org/repo-002', description: 'Curated description' },
  { name: 'ORG/Repo-003', url: 'https://git.example.org/org/repo-003' },
  { name: 'elsewhere/tool', url: 'https://github.com/elsewhere/tool', description: 'Not on our forge' },
  { url: 'https://nameless.example.org' },
  'not an object',
];

async function estate(t: Parameters<typeof tempDataDir>[0], forgeUrl: string | undefined, ledger: unknown = LEDGER, timeoutMs = 5000) {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify(forgeUrl ? { forge: { url: forgeUrl, timeout_ms: timeoutMs } } : {}));
  await writeFile(path.join(dir, 'repos.json'), typeof ledger === 'string' ? ledger : JSON.stringify(ledger));
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  return (route: string) => server.get(route, { 'X-API-Key': key });
}

test('/repos merges the forge with the ledger by name and marks each with its source', async (t) => {
  const forge = await startFakeForge(t, { repos: 3 });
  const get = await estate(t, forge.url);
  const r = await get('/repos');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(
    r.json.items.map((i: { name: string; source: string }) => [i.name, i.source]),
    [
      ['elsewhere/tool', 'ledger'],
      ['org/repo-001', 'forge'],
      ['ORG/Repo-003', 'both'],
      ['org/repo-002', 'both'],
    ].sort((a, b) => (a[0] as string).localeCompare(b[0] as string)),
  );
  const both = r.json.items.find((i: { name: string }) => i.name === 'org/repo-002');
  assert.deepEqual(both, {
    name: 'org/repo-002',
    source: 'both',
    url: 'https://git.example.org/org/repo-002',
    description: 'Curated description',
    open_issues: 1,
    stars: 1,
    language: 'Go',
    archived: false,
    updated_at: '2026-11-01T00:01:00.000Z',
  });
  const forgeOnly = r.json.items.find((i: { name: string }) => i.name === 'org/repo-001');
  assert.equal(forgeOnly.url, `${forge.url}/org/repo-001`);
  assert.equal(r.json.forge_error, null);
  assert.equal(r.json.ledger_error, null);
  assert.equal(r.json.ledger_skipped, 2);
  assert.equal(r.json.forge_configured, true);
});

test('/repos still answers from the ledger when the forge is down, hangs or is not configured', async (t) => {
  const cases: [string, () => Promise<string | undefined>, RegExp | null][] = [
    ['refused', refusedUrl, /is unreachable: connect ECONNREFUSED/],
    ['hanging', async () => (await startHanging(t)).url, /did not answer within 300 ms/],
    ['not configured', async () => undefined, null],
  ];
  for (const [name, start, error] of cases) {
    await t.test(name, async (t) => {
      const get = await estate(t, await start(), LEDGER, 300);
      const r = await get('/repos');
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.count, 3);
      assert.ok(r.json.items.every((i: { source: string }) => i.source === 'ledger'));
      if (error) assert.match(r.json.forge_error, error);
      else assert.equal(r.json.forge_error, null);
      assert.equal(r.json.forge_configured, error !== null);
    });
  }
});

test('/repos still answers from the forge when the ledger is broken', async (t) => {
  const forge = await startFakeForge(t, { repos: 2 });
  for (const [name, ledger, error] of [
    ['not JSON', '[{"name":', /repos\.json is not valid JSON/],
    ['not an array', '{"name": "x"}', /repos\.json is not a JSON array/],
  ] as const) {
    await t.test(name, async (t) => {
      const get = await estate(t, forge.url, ledger);
      const r = await get('/repos');
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.items.map((i: { source: string }) => i.source), ['forge', 'forge']);
      assert.match(r.json.ledger_error, error);
    });
  }
});
