import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import type { JsonRecord } from '../src/core/jsonl/parse-record.ts';
import { RecordLog } from '../src/core/record-log.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { appendRequest } from './helpers/records.ts';
import { startServer } from './helpers/server.ts';

// Reads of a record log neither wait for each other nor for the index: a
// filtered page is read backwards from the end of the file while the index is
// first built (or catches up with other writers' lines), meeting the index
// where it has got to. These tests check that such pages are the ones the
// finished index gives, and that readers running together, while another
// process appends, each see a consistent page.

function groupLog(file: string): RecordLog {
  return new RecordLog({
    file,
    accept: (r) => typeof r.k === 'string',
    key: (r) => r.k as string,
    facets: { group: (r) => r.group as string | undefined },
    uniqueFacets: { id: (r) => r.id as string | undefined },
    tally: { time: (r) => (typeof r.n === 'number' ? r.n : Number.NaN), by: (r) => r.group as string | undefined },
  });
}

/** The page `newest(limit, group)` must give, computed from the file's text alone. */
function expectedPage(text: string, group: string, limit: number): { keys: string[]; skipped: number } {
  const lines = text.split('\n');
  // The last element is what follows the last '\n': a partial line when not empty.
  const torn = lines.pop() !== '' ? 1 : 0;
  const keys: string[] = [];
  let skipped = torn;
  for (let i = lines.length - 1; i >= 0 && keys.length < limit; i--) {
    const line = lines[i] as string;
    if (!line.trim()) continue;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {}
    const r = record as JsonRecord | undefined;
    if (!r || typeof r !== 'object' || Array.isArray(r) || typeof r.k !== 'string') skipped++;
    else if (r.group === group) keys.push(r.k);
  }
  return { keys, skipped };
}

const keysOf = (page: { records: JsonRecord[] }) => page.records.map((r) => r.k as string);

/** About 6 MB: groups g0-g9 all along, `rare` in the first lines only, lines that are not records here and there, a torn last line. */
async function bigLog(file: string): Promise<string> {
  const lines: string[] = [];
  for (let i = 0; i < 40_000; i++) {
    if (i % 997 === 5) lines.push('not a record');
    if (i % 1499 === 7) lines.push('{"no":"key"}');
    if (i % 3001 === 11) lines.push('');
    const group = i < 12 && i % 3 === 0 ? 'rare' : `g${i % 10}`;
    lines.push(JSON.stringify({ k: `k${i}`, id: `id-${i}`, group, title: `Record number ${i} of a log big enough to take a while to index`, n: i }));
  }
  const text = `${lines.join('\n')}\n{"k":"torn","gro`;
  await writeFile(file, text);
  return text;
}

const QUERIES: [string, number][] = [
  ['g3', 5],
  ['g7', 200],
  ['rare', 10],
  ['rare', 2],
  ['nobody', 10],
  // Every record of a group: the page meets the index midway.
  ['g1', 100_000],
];

test('filtered pages read while the index is first built are the pages of the built index, and do not wait for it', async (t) => {
  const file = path.join(await tempDataDir(t), 'big.jsonl');
  const text = await bigLog(file);
  const log = groupLog(file);
  const events: string[] = [];
  // The first reads start the index; refresh() resolves when it is built.
  const early = QUERIES.map(([group, limit]) => log.newest(limit, { facet: 'group', value: group }));
  const first = early[0]!.then((page) => (events.push('first page'), page));
  const built = log.refresh().then(() => events.push('index built'));
  const pages = await Promise.all([first, ...early.slice(1)]);
  await built;
  assert.deepEqual(events, ['first page', 'index built'], 'a page of a frequent value comes before the index is built');
  for (const [i, [group, limit]] of QUERIES.entries()) {
    const expected = expectedPage(text, group, limit);
    const after = await log.newest(limit, { facet: 'group', value: group });
    assert.deepEqual(keysOf(pages[i]!), expected.keys, `${group} ${limit}, while building`);
    assert.equal(pages[i]!.skipped, expected.skipped, `${group} ${limit} skipped, while building`);
    assert.deepEqual(keysOf(after), expected.keys, `${group} ${limit}, built`);
    assert.equal(after.skipped, expected.skipped, `${group} ${limit} skipped, built`);
  }
  assert.ok(pages[2]!.records.length === 4 && pages[4]!.records.length === 0, 'the rare group is found across the meeting point');
});

test('lines another writer appends are read before the index catches up with them', async (t) => {
  const file = path.join(await tempDataDir(t), 'a.jsonl');
  await bigLog(file);
  const log = groupLog(file);
  await log.refresh();
  // Another writer repairs the torn line and appends more, some not records.
  const more = ['', '{"k":"m1","group":"g3"}', 'garbage', '{"k":"m2","group":"g4"}', '{"k":"m3","group":"g3"}', '{"k":"half","gro'].join('\n');
  await appendFile(file, more);
  const text = await readFile(file, 'utf8');
  for (const [group, limit] of [['g3', 3], ['g3', 50], ['g4', 1], ['rare', 10]] as const) {
    const page = await log.newest(limit, { facet: 'group', value: group });
    const expected = expectedPage(text, group, limit);
    assert.deepEqual(keysOf(page), expected.keys, `${group} ${limit}`);
    assert.equal(page.skipped, expected.skipped, `${group} ${limit} skipped`);
  }
  assert.deepEqual(keysOf(await log.newest(2, { facet: 'group', value: 'g3' })), ['m3', 'm1']);
});

test('readers running together while another process appends each see a consistent page', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'a.jsonl');
  const seed = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ k: `s${i}`, id: `id-s${i}`, group: `g${i % 3}` }));
  await writeFile(file, `${seed.join('\n')}\n`);
  const log = groupLog(file);
  // The writer: another process, appending one record at a time with its own index.
  const writerScript = `
    import { RecordLog } from ${JSON.stringify(path.join(import.meta.dirname, '..', 'src', 'core', 'record-log.ts'))};
    const log = new RecordLog({ file: ${JSON.stringify(file)}, accept: (r) => typeof r.k === 'string', key: (r) => r.k, facets: { group: (r) => r.group }, uniqueFacets: { id: (r) => r.id } });
    for (let i = 0; i < 300; i++) {
      await log.append({ key: 'w' + i, same: () => false, create: () => ({ k: 'w' + i, id: 'id-w' + i, group: 'g' + (i % 3) }) });
      process.stdout.write('w' + i + '\\n');
    }
  `;
  const writer = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', writerScript], { stdio: ['ignore', 'pipe', 'pipe'] });
  const acknowledged: string[] = [];
  let stderr = '';
  writer.stdout.setEncoding('utf8').on('data', (chunk: string) => acknowledged.push(...chunk.split('\n').filter(Boolean)));
  writer.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => writer.on('exit', resolve));
  t.after(() => writer.kill());
  const checks: Promise<{ group: string; limit: number; keys: string[]; ackedBefore: string[] }>[] = [];
  let running = true;
  void exited.then(() => (running = false));
  while (running) {
    // Eight readers at once, of three groups and two page sizes, and a since and a tally.
    for (let r = 0; r < 8; r++) {
      const group = `g${r % 3}`;
      const limit = r % 2 ? 7 : 40;
      const ackedBefore = [...acknowledged];
      checks.push(log.newest(limit, { facet: 'group', value: group }).then((page) => ({ group, limit, keys: keysOf(page), ackedBefore })));
    }
    await Promise.all([log.since('start', 5), log.tally([0]), ...checks.slice(-8)]);
  }
  assert.equal(await exited, 0, stderr);
  const text = await readFile(file, 'utf8');
  const all = text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as JsonRecord);
  assert.equal(all.length, 3300);
  const order = new Map<string, string[]>();
  for (const r of all) order.set(r.group as string, [...(order.get(r.group as string) ?? []), r.k as string]);
  const results = await Promise.all(checks);
  assert.ok(results.length >= 16, `${results.length} reads`);
  for (const { group, limit, keys, ackedBefore } of results) {
    const list = order.get(group) as string[];
    // Newest first, without gaps or repeats: a run of the group's records in file order, ending at the newest one the page saw.
    const end = list.indexOf(keys[0] as string);
    assert.ok(end >= 0, `${keys[0]} is a record of ${group}`);
    assert.deepEqual(keys, list.slice(Math.max(0, end - limit + 1), end + 1).reverse(), `a consistent page of ${group}`);
    // Every append acknowledged before the read began is seen.
    const newestAcked = ackedBefore.filter((k) => list.includes(k)).at(-1);
    if (newestAcked) assert.ok(end >= list.indexOf(newestAcked), `${group}: ${newestAcked} was acknowledged before the read`);
  }
  assert.equal((await log.tally([0])).count, 3300);
});

test('the first filtered feeds after the server starts are the ones it gives once the index is built', async (t) => {
  const dir = await tempDataDir(t);
  const lines = Array.from({ length: 30_000 }, (_, i) =>
    JSON.stringify({
      id: `wc_${i.toString(16).padStart(16, '0')}`,
      task_id: `T-${i}`,
      board: i < 5 ? 'rare' : `b${i % 7}`,
      assignee: `agent-${i % 5}`,
      title: `Task ${i}`,
      completed_at: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
    }),
  );
  await writeFile(path.join(dir, 'work', 'completions.jsonl'), `${lines.join('\n')}\nnot json\n`);
  const server = await startServer(t, dir);
  const routes = ['/work/feed?board=b3&limit=5', '/work/feed?board=rare&limit=10', '/work/feed?board=none', '/work/feed?board=b1&limit=1000'];
  const first = await Promise.all(routes.map((r) => server.get(r)));
  // /estate/agents counts every completion: it answers once the index is built.
  const agents = await server.get('/estate/agents');
  assert.equal(agents.json.window.records, 30_000);
  const later = await Promise.all(routes.map((r) => server.get(r)));
  for (const [i, route] of routes.entries()) {
    assert.equal(first[i]!.status, 200, `${route}: ${first[i]!.text}`);
    assert.deepEqual(first[i]!.json, later[i]!.json, route);
  }
  assert.deepEqual(
    first[1]!.json.items.map((c: { task_id: string }) => c.task_id),
    ['T-4', 'T-3', 'T-2', 'T-1', 'T-0'],
  );
  assert.equal(first[0]!.json.items[0].task_id, `T-${29_999 - ((29_999 - 3) % 7)}`);
  assert.equal(first[2]!.json.count, 0);
  assert.equal(first[2]!.json.skipped_lines, 1);
  assert.equal(first[3]!.json.count, 1000);
});

test('an unchanged log answers unfiltered pages and tallies from its index, the same pages as read backwards', async (t) => {
  const file = path.join(await tempDataDir(t), 'a.jsonl');
  const lines: string[] = [];
  for (let i = 0; i < 400; i++) {
    if (i % 37 === 3) lines.push('not a record');
    if (i % 41 === 5) lines.push('', '   ');
    if (i % 53 === 7) lines.push('{"no":"key"}');
    lines.push(JSON.stringify({ k: `k${i}`, id: `id-${i}`, group: `g${i % 3}`, n: i }));
  }
  await writeFile(file, `${lines.join('\n')}\nlast words\n`);
  const log = groupLog(file);
  await log.refresh();
  for (const limit of [1, 2, 10, 20, 99, 100, 101, 1000]) {
    for (const where of [undefined, { facet: 'group', value: 'g1' }, { facet: 'group', value: 'none' }]) {
      // A fresh log has no index yet: it reads the file backwards.
      const fresh = await groupLog(file).newest(limit, where);
      const page = await log.newest(limit, where);
      assert.deepEqual(keysOf(page), keysOf(fresh), `limit ${limit} ${where?.value}`);
      assert.equal(page.skipped, fresh.skipped, `limit ${limit} ${where?.value} skipped`);
    }
  }
  assert.ok(Object.isFrozen((await log.newest(3, { facet: 'group', value: 'g2' })).records[0]), 'a kept record');
  const first = await log.tally([100]);
  const again = await log.tally([100]);
  assert.deepEqual(again, first);
  assert.deepEqual([...again.newest.values()].map((r) => r.k).sort(), ['k397', 'k398', 'k399']);
  // What is kept for later reads is shared: frozen, never changed by a reader.
  const kept = (await log.newest(1)).records[0] as JsonRecord;
  assert.ok(Object.isFrozen(kept));
  assert.throws(() => {
    kept.k = 'changed';
  }, TypeError);
  // Another writer appends (and leaves a partial line): the next answers have it, never a kept page.
  await appendFile(file, '{"k":"k400","id":"id-400","group":"g1","n":400}\n{"k":"k401"');
  assert.deepEqual(keysOf(await log.newest(2)), ['k400', 'k399']);
  assert.equal((await log.newest(2)).skipped, 1 + 1, 'the partial line and "last words"');
  assert.equal((await log.tally([0])).count, 401);
  assert.equal((await log.tally([0])).newest.size, 3);
  assert.ok([...(await log.tally([0])).newest.values()].some((r) => r.k === 'k400'));
});
