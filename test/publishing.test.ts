import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { entryBody, logLines } from './helpers/records.ts';
import { newKey, startServer } from './helpers/server.ts';

// POST /publishing/register and the publishing reads, over HTTP and the CLI.

const LOG = 'publishing/entries.jsonl';
const REQUIRED = ['title', 'slug', 'content_type', 'target_site'];

async function setup(t: Parameters<typeof tempDataDir>[0], fixture?: string) {
  const dir = await tempDataDir(t, fixture);
  const key = await newKey(dir, 'publisher');
  const server = await startServer(t, dir);
  const register = (body: unknown, headers: Record<string, string> = { 'X-API-Key': key }) =>
    server.request('POST', '/publishing/register', { body: body as object, headers });
  return { dir, key, server, register };
}

test('register: 201 with entry_id and registered_at, 200 on an identical replay, 409 on a different one', async (t) => {
  const { dir, register } = await setup(t);
  const body = entryBody(1, { url: 'https://garden.example.org/piece-1', summary: 'A note.', published_at: '2026-11-20T10:00:00+01:00' });
  const created = await register(body);
  assert.equal(created.status, 201);
  assert.match(created.json.entry_id, /^pub_[0-9a-f]{16}$/);
  assert.match(created.json.registered_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const { entry_id, registered_at, ...rest } = created.json;
  assert.deepEqual(rest, body);

  const replay = await register(body);
  assert.equal(replay.status, 200);
  assert.deepEqual(replay.json, created.json);

  const conflict = await register({ ...body, title: 'Renamed' });
  assert.equal(conflict.status, 409);
  assert.match(conflict.json.detail, /garden\/piece-1.*title/);
  // The same slug on another site is another piece.
  assert.equal((await register({ ...body, target_site: 'blog' })).status, 201);
  assert.equal((await logLines(dir, LOG)).length, 2);
});

test('register: validation, 403 without a credential, 413 over 1 MiB', async (t) => {
  const { dir, register, key, server } = await setup(t);
  for (const field of REQUIRED) {
    await t.test(`missing ${field}`, async () => {
      const body = entryBody(1);
      delete body[field];
      const r = await register(body);
      assert.equal(r.status, 422);
      assert.deepEqual(r.json.detail, [{ loc: ['body', field], msg: 'Field required', type: 'missing' }]);
    });
  }
  const cases: [string, Record<string, unknown>, string, string][] = [
    ['slug with a space', { slug: 'my piece' }, 'slug', 'string_pattern_mismatch'],
    ['content_type capitalised', { content_type: 'Essay' }, 'content_type', 'string_pattern_mismatch'],
    ['target_site too long', { target_site: 'a'.repeat(65) }, 'target_site', 'string_too_long'],
    ['url not http(s)', { url: 'file:///etc/passwd' }, 'url', 'url_parsing'],
    ['published_at not a datetime', { published_at: 'yesterday' }, 'published_at', 'value_error'],
    ['published_at a date only', { published_at: '2026-11-20' }, 'published_at', 'value_error'],
    ['title too long', { title: 'x'.repeat(301) }, 'title', 'string_too_long'],
    ['an unknown field', { entry_id: 'pub_x' }, 'entry_id', 'extra_forbidden'],
  ];
  for (const [name, overrides, field, type] of cases) {
    await t.test(name, async () => {
      const r = await register(entryBody(1, overrides));
      assert.equal(r.status, 422);
      assert.deepEqual(r.json.detail.map((d: { loc: unknown }) => d.loc), [['body', field]]);
      assert.equal(r.json.detail[0].type, type);
    });
  }
  await t.test('malformed JSON', async () => {
    const r = await server.request('POST', '/publishing/register', { body: '{"title":', headers: { 'X-API-Key': key } });
    assert.equal(r.status, 422);
    assert.equal(r.json.detail[0].type, 'json_invalid');
  });
  await t.test('over 1 MiB', async () => {
    const r = await register(entryBody(1, { summary: 'x'.repeat(1_100_000) }));
    assert.equal(r.status, 413);
  });
  await t.test('no credential', async () => {
    assert.equal((await register(entryBody(1), {})).status, 403);
  });
  assert.deepEqual(await logLines(dir, LOG), []);
});

test('publishing reads over the demo estate: latest, one entry, by site, by type', async (t) => {
  const { server } = await setup(t, DEMO_FIXTURE);
  const latest = await server.get('/publishing/latest');
  assert.equal(latest.status, 200);
  assert.equal(latest.json.count, 10);
  const times = latest.json.items.map((e: { registered_at: string }) => e.registered_at);
  assert.deepEqual(times, [...times].sort().reverse(), 'newest first');

  const one = latest.json.items[3];
  const show = await server.get(`/publishing/${one.entry_id}`);
  assert.equal(show.status, 200);
  assert.deepEqual(show.json, one);

  const cases: [string, (e: Record<string, string>) => boolean][] = [
    ['/publishing/by-site/garden', (e) => e.target_site === 'garden'],
    ['/publishing/by-site/blog?limit=2', (e) => e.target_site === 'blog'],
    ['/publishing/by-type/essay', (e) => e.content_type === 'essay'],
    ['/publishing/by-type/poem?limit=1', (e) => e.content_type === 'poem'],
  ];
  for (const [route, belongs] of cases) {
    await t.test(route, async () => {
      const r = await server.get(route);
      assert.equal(r.status, 200);
      assert.ok(r.json.count > 0);
      assert.ok(r.json.items.every(belongs));
      const limit = Number(new URL(route, 'http://x').searchParams.get('limit') ?? 100);
      assert.ok(r.json.count <= limit);
    });
  }
  const errors: [string, number][] = [
    ['/publishing/pub_0000000000000000', 404],
    ['/publishing/register', 404],
    ['/publishing/by-site/nowhere', 200],
    ['/publishing/by-site/Not%20a%20slug', 422],
    ['/publishing/latest?limit=1001', 422],
    ['/publishing/by-type/essay?limit=0', 422],
  ];
  for (const [route, status] of errors) {
    await t.test(`${route} → ${status}`, async () => {
      const r = await server.get(route);
      assert.equal(r.status, status);
      if (status === 404) assert.equal(typeof r.json.detail, 'string');
    });
  }
});

test('estate publish commands: the same bodies as the routes; register locally and remotely', async (t) => {
  const { dir, server, key } = await setup(t, DEMO_FIXTURE);
  const first = (await server.get('/publishing/latest?limit=1')).json.items[0];
  const cases: [string[], string][] = [
    [['publish', 'latest', '--limit', '3'], '/publishing/latest?limit=3'],
    [['publish', 'show', first.entry_id], `/publishing/${first.entry_id}`],
    [['publish', 'by-site', 'notes'], '/publishing/by-site/notes'],
    [['publish', 'by-type', 'sketch', '--limit', '2'], '/publishing/by-type/sketch?limit=2'],
  ];
  for (const [args, route] of cases) {
    await t.test(args.join(' '), async () => {
      const [cli, http] = await Promise.all([runEstate([...args, '--json', '--data-dir', dir]), server.get(route)]);
      assert.equal(cli.code, 0, cli.stderr);
      assert.deepEqual(cli.json, http.json);
    });
  }
  const missing = await runEstate(['publish', 'show', 'pub_nope', '--data-dir', dir]);
  assert.equal(missing.code, 3);
  assert.match(missing.stderr, /^estate: no published entry pub_nope\n$/);

  const args = ['publish', 'register', '--title', 'From the CLI', '--slug', 'from-the-cli', '--content-type', 'note', '--target-site', 'notes', '--entry-url', 'https://notes.example.org/from-the-cli', '--json'];
  const local = await runEstate([...args, '--data-dir', dir]);
  assert.equal(local.code, 0, local.stderr);
  assert.equal(local.json.url, 'https://notes.example.org/from-the-cli');
  const remote = await runEstate([...args, '--url', server.url, '--api-key', key]);
  assert.equal(remote.code, 0, remote.stderr);
  assert.deepEqual(remote.json, local.json, 'a replay through the server answers the record the CLI stored');
  const shown = await server.get(`/publishing/${local.json.entry_id}`);
  assert.deepEqual(shown.json, local.json);
  const bad = await runEstate([...args.slice(0, -3), '--entry-url', 'ftp://x', '--data-dir', dir]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^estate: invalid --entry-url: /);
});
