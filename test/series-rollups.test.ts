import assert from 'node:assert/strict';
import { appendFile, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate, startEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// The rollups behind the range routes (DESIGN.md 7b) on the data dir: the
// tier each range is answered from, an answer from a rollup once the raw
// records are pruned, `estate rollups rebuild`, and `estate serve` keeping
// them current while another process appends to the log.

const BASE = Math.floor((Date.now() - 3 * 86_400_000) / 3_600_000) * 3_600_000;
const at = (s: number) => new Date(BASE + s * 1000).toISOString();
/** Two nodes, a point every 20 s for two hours; cpu_pct follows i so every bucket differs. */
const POINTS = Array.from({ length: 720 }, (_, i) => ({ ts: at(Math.floor(i / 2) * 20), node: i % 2 ? 'b' : 'a', cpu_pct: (i * 7) % 23, load1: i / 2 }));
const lines = (records: object[]) => records.map((r) => JSON.stringify(r)).join('\n') + '\n';
const q = (from: string, to: string, extra = '') => `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}${extra}`;

test('a range is answered from the tier its step allows, the same buckets as the raw records; a pruned range from a rollup', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'trends.jsonl'), lines(POINTS));
  const key = await newKey(dir);
  const get = async (query: string) => {
    const server = await startServer(t, dir);
    const r = await server.get(`/trends/range?${query}`, { 'X-API-Key': key });
    await server.stop();
    assert.equal(r.status, 200, r.text);
    return r.json;
  };
  const minutes = q(at(0), at(3600), '&points=60');
  const hours = q(at(0), at(7200), '&points=2&node=b');
  const seconds = q(at(600), at(1200), '&points=300');
  // No rollups yet: the raw records answer every step.
  const raw = { minutes: await get(minutes), hours: await get(hours), seconds: await get(seconds) };
  assert.deepEqual([raw.minutes.tier, raw.hours.tier, raw.seconds.tier], ['raw', 'raw', 'raw']);
  assert.deepEqual([raw.minutes.step_s, raw.hours.step_s, raw.seconds.step_s], [60, 3600, 2]);
  assert.equal(raw.minutes.items.length, 60);
  assert.equal(raw.minutes.items[0].count, 6);

  const rebuilt = await runEstate(['rollups', 'rebuild', '--data-dir', dir, '--json']);
  assert.equal(rebuilt.code, 0, rebuilt.stderr);
  assert.equal(rebuilt.json.series.trends.records, 720);
  assert.equal(rebuilt.json.series.disk.records, 0);

  // With rollups: 1m answers a step of minutes, 1h one of hours, the raw records a step of seconds; the buckets are the same.
  const minutesNow = await get(minutes);
  const hoursNow = await get(hours);
  assert.equal(minutesNow.tier, '1m');
  assert.equal(hoursNow.tier, '1h');
  assert.equal((await get(seconds)).tier, 'raw');
  assert.deepEqual(minutesNow.items, raw.minutes.items);
  assert.deepEqual(hoursNow.items, raw.hours.items);
  assert.deepEqual(hoursNow.items.map((i: { count: number }) => i.count), [180, 180]);

  // The raw records pruned: the range the raw series no longer holds comes from the 1m rollup, at its step.
  const pruned = await runEstate(['prune', '--data-dir', dir, '--older-than', '1d', '--log', 'trends']);
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.equal((await readFile(path.join(dir, 'trends.jsonl'), 'utf8')).trim(), '');
  const fromRollup = await get(seconds);
  assert.equal(fromRollup.tier, '1m');
  assert.equal(fromRollup.step_s, 60);
  assert.deepEqual(
    fromRollup.items,
    raw.minutes.items.filter((i: { ts: string }) => i.ts >= at(600) && i.ts < at(1200)),
  );
  assert.deepEqual((await get(minutes)).items, raw.minutes.items);

  // A rebuild after the prune keeps what only the rollups hold.
  assert.equal((await runEstate(['rollups', 'rebuild', '--data-dir', dir, '--series', 'trends'])).code, 0);
  assert.deepEqual((await get(minutes)).items, raw.minutes.items);
  const cli = await runEstate(['trends', 'range', '--data-dir', dir, '--from', at(0), '--to', at(7200), '--points', '2', '--node', 'b', '--json']);
  assert.deepEqual(cli.json, hoursNow);
  assert.equal((await runEstate(['rollups', 'rebuild', '--data-dir', dir, '--series', 'pulse'])).code, 2);
});

test('estate serve builds the rollups and keeps them current while other processes append to the log', async (t) => {
  const dir = await tempDataDir(t);
  const trends = path.join(dir, 'trends.jsonl');
  await writeFile(trends, lines(POINTS));
  const key = await newKey(dir);
  const server = startEstate(t, ['serve', '--data-dir', dir, '--port', '0']);
  await server.waitForStdout('the URL line', (out) => /http:\/\/127\.0\.0\.1:\d+/.test(out));
  const url = /http:\/\/127\.0\.0\.1:\d+/.exec(server.stdout())?.[0] as string;
  const state = path.join(dir, 'rollups', 'trends', 'state.json');
  const caughtUp = async () => {
    try {
      return JSON.parse(await readFile(state, 'utf8')).offset === (await stat(trends)).size;
    } catch {
      return false;
    }
  };
  await waitUntil('the first build of the rollups', caughtUp);
  const day = path.join(dir, 'rollups', 'trends', '1m', `${at(0).slice(0, 10)}.jsonl`);
  assert.match(await readFile(day, 'utf8'), new RegExp(`"b":${BASE / 1000},"node":"a","n":3,`));

  // Another tool appends a line; `estate collect --once` appends this node's sample.
  await appendFile(trends, `${JSON.stringify({ ts: at(7260), node: 'c', cpu_pct: 42 })}\n`);
  const collected = await runEstate(['collect', '--once', '--data-dir', dir, '--node', 'here']);
  assert.equal(collected.code, 0, collected.stderr);
  await waitUntil('the rollups caught up with the appends', caughtUp);
  assert.match(await readFile(day, 'utf8'), new RegExp(`"b":${BASE / 1000 + 7260},"node":"c","n":1,"f":\\{"cpu_pct":\\[1,42,42,42\\]\\}`));
  const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
  const month = path.join(dir, 'rollups', 'trends', '1h', `${new Date(hour).toISOString().slice(0, 7)}.jsonl`);
  assert.match(await readFile(month, 'utf8'), new RegExp(`"b":${hour / 1000},"node":"here","n":1,`));

  const r = await fetch(`${url}/trends/range?${q(at(7200), at(7320), '&points=2&node=c')}`, { headers: { 'X-API-Key': key } });
  const body = (await r.json()) as { tier: string; items: unknown[] };
  assert.equal(body.tier, '1m');
  assert.deepEqual(body.items, [{ ts: at(7260), count: 1, min: { cpu_pct: 42 }, mean: { cpu_pct: 42 }, max: { cpu_pct: 42 } }]);
  const stopped = await server.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
});

test('rollups.retention: a tier keeps its buckets as long as the config says; past it, the coarser tier answers', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ rollups: { retention: { '1m': '1d' } } }));
  await writeFile(path.join(dir, 'trends.jsonl'), lines(POINTS));
  const rebuilt = await runEstate(['rollups', 'rebuild', '--data-dir', dir, '--series', 'trends', '--json']);
  assert.equal(rebuilt.code, 0, rebuilt.stderr);
  // Three days old: the 1m day files are past a retention of one day, the 1h month file is not.
  assert.ok(rebuilt.json.series.trends.pruned >= 1, rebuilt.stdout);
  await assert.rejects(stat(path.join(dir, 'rollups', 'trends', '1m', `${at(0).slice(0, 10)}.jsonl`)));
  assert.equal((await runEstate(['prune', '--data-dir', dir, '--older-than', '1d', '--log', 'trends'])).code, 0);
  const r = await runEstate(['trends', 'range', '--data-dir', dir, '--from', at(0), '--to', at(3600), '--points', '60', '--node', 'a', '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual([r.json.tier, r.json.step_s, r.json.items.length, r.json.items[0].count], ['1h', 3600, 1, 180]);

  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ rollups: { retention: { '1m': 'soon' } } }));
  const refused = await runEstate(['trends', 'range', '--data-dir', dir]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /rollups\.retention\.1m/);
});
