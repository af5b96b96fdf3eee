import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { registerEntry } from '../src/core/publishing.ts';
import { migrateStore } from '../src/core/store/postgres/migrate.ts';
import { VERSION } from '../src/version.ts';
import { runEstate } from './helpers/cli.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { startPostgres } from './helpers/postgres.ts';
import { startServer } from './helpers/server.ts';

function entry(i: number, contentType: string, extra: Record<string, unknown> = {}) {
  const day = String(1 + (i % 28)).padStart(2, '0');
  return { entry_id: `pub_${i}`, title: `Piece ${i}`, slug: `piece-${i}`, content_type: contentType, target_site: 'garden', registered_at: `2026-10-${day}T12:00:00.000Z`, ...extra };
}

async function gardenDir(t: Parameters<typeof tempDataDir>[0], lines: string[]) {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'publishing', 'entries.jsonl'), lines.map((l) => `${l}\n`).join(''));
  await writeFile(
    path.join(dir, 'estate.config.json'),
    JSON.stringify({ node_name: 'hub', identity: { name: 'Test Garden', tagline: 'tended', links: [{ label: 'home', url: 'https://example.org' }] } }),
  );
  await writeFile(path.join(dir, 'health-pulse.jsonl'), `${JSON.stringify({ ts: '2026-11-01T00:00:00Z', status: 'degraded', checks: { forge: 'slow' } })}\n`);
  return dir;
}

test('/api/garden is public and splits the publishing feed into writings and expressive forms, newest first', async (t) => {
  const types = ['essay', 'poem', 'note', 'sketch', 'changelog', 'Essay', 'haiku'];
  const lines = Array.from({ length: 30 }, (_, i) => JSON.stringify(entry(i, types[i % types.length] as string, i === 28 ? { published_at: '2026-11-02T00:00:00Z', url: 'https://x/28', summary: 's' } : {})));
  lines.splice(3, 0, 'not json', JSON.stringify({ title: 'no type' }));
  const dir = await gardenDir(t, lines);
  const server = await startServer(t, dir);
  const r = await server.get('/api/garden');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.identity, { name: 'Test Garden', tagline: 'tended', links: [{ label: 'home', url: 'https://example.org' }], node: 'hub' });
  const writingTypes = new Set(['essay', 'note', 'changelog', 'Essay']);
  assert.equal(r.json.writings.count, 10);
  assert.equal(r.json.forms.count, 10);
  assert.ok(r.json.writings.items.every((p: { content_type: string }) => writingTypes.has(p.content_type)));
  assert.ok(r.json.forms.items.every((p: { content_type: string }) => !writingTypes.has(p.content_type)));
  assert.deepEqual(r.json.writings.items[0], {
    entry_id: 'pub_28',
    title: 'Piece 28',
    slug: 'piece-28',
    content_type: 'essay',
    target_site: 'garden',
    url: 'https://x/28',
    summary: 's',
    published_at: '2026-11-02T00:00:00Z',
  });
  assert.equal(r.json.forms.items[0].title, 'Piece 29');
  assert.equal(r.json.forms.items[0].published_at, '2026-10-02T12:00:00.000Z', 'registered_at stands in for published_at');
  assert.ok(r.json.writings.items.some((p: { content_type: string }) => p.content_type === 'Essay'), 'content types match case-insensitively');
  assert.deepEqual([r.json.writings.error, r.json.forms.error], [null, null]);
  assert.deepEqual(r.json.pulse, { status: 'degraded', ts: '2026-11-01T00:00:00Z', last_activity: null, error: null });
});

test('/api/garden: an unreadable publishing feed is an error in its sections, never a failed answer', async (t) => {
  const dir = await gardenDir(t, []);
  await rm(path.join(dir, 'publishing', 'entries.jsonl'));
  await mkdir(path.join(dir, 'publishing', 'entries.jsonl'));
  const server = await startServer(t, dir);
  const r = await server.get('/api/garden');
  assert.equal(r.status, 200, r.text);
  for (const s of ['writings', 'forms']) {
    assert.deepEqual(r.json[s].items, []);
    assert.match(r.json[s].error, /^publishing\/entries\.jsonl in the data dir is a folder, not a file/);
  }
  assert.equal(r.json.pulse.error, null);
  assert.doesNotMatch(r.text, new RegExp(dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), 'a public answer names no server path');
});

test('/api/garden on an empty data dir, and estate garden on the demo', async (t) => {
  const empty = await tempDataDir(t);
  const server = await startServer(t, empty);
  const r = await server.get('/api/garden');
  assert.equal(r.status, 200);
  assert.deepEqual(r.json.identity, { name: os.hostname(), tagline: null, links: [], node: os.hostname() }, 'without node_name, the host name');
  assert.deepEqual([r.json.writings.count, r.json.forms.count, r.json.pulse.status], [0, 0, 'unknown']);

  const cli = await runEstate(['garden', '--json', '--data-dir', DEMO_FIXTURE]);
  assert.equal(cli.code, 0, cli.stderr);
  assert.equal(cli.json.identity.name, 'The Demo Estate');
  assert.equal(cli.json.writings.count, 10);
  assert.ok(cli.json.forms.items.some((p: { content_type: string }) => p.content_type === 'poem'));
});

/** The environment of a server whose store is `store`: the data dir's, or a fresh, migrated PostgreSQL database (undefined: skipped). */
async function storeEnv(t: TestContext, store: 'data dir' | 'postgres'): Promise<NodeJS.ProcessEnv | undefined> {
  if (store === 'data dir') return {};
  const pg = await startPostgres(t);
  if (!pg) {
    t.skip('PostgreSQL is not installed (apt-get install postgresql)');
    return undefined;
  }
  await migrateStore(pg.url, {}, VERSION);
  return { ESTATE_STORE: pg.url };
}

for (const store of ['data dir', 'postgres'] as const) {
  test(`/api/garden (${store}): 300 essays then 1,200 poems: writings are the newest 10 essays, forms the newest 10 poems`, async (t) => {
    const env = await storeEnv(t, store);
    if (!env) return;
    const dir = await tempDataDir(t);
    const server = await startServer(t, dir, { env });
    // Registered as POST /publishing/register does, all of a kind at once (so in batches), essays first.
    const publish = async (contentType: string, count: number) => {
      const results = await Promise.all(
        Array.from({ length: count }, (_, n) =>
          registerEntry(server.ctx.store.entries, { title: `${contentType} ${n}`, slug: `${contentType}-${n}`, content_type: contentType, target_site: 'garden' }, () => new Date()),
        ),
      );
      assert.deepEqual(new Set(results.map((r) => r.outcome)), new Set(['created']));
    };
    await publish('essay', 300);
    await publish('poem', 1200);
    const newest = (contentType: string, last: number) => Array.from({ length: 10 }, (_, i) => `${contentType} ${last - i}`);
    const r = await server.get('/api/garden');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.writings.items.map((p: { title: string }) => p.title), newest('essay', 299));
    assert.equal(r.json.writings.count, 10);
    assert.deepEqual(r.json.forms.items.map((p: { title: string }) => p.title), newest('poem', 1199));
    assert.equal(r.json.forms.count, 10);
    assert.deepEqual([r.json.writings.error, r.json.forms.error], [null, null]);
  });
}
