import assert from 'node:assert/strict';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate, startEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { waitUntil } from './helpers/wait-until.ts';

// The collector applies collect.retention (DESIGN.md 7a) to the series logs
// it writes: at most once an hour, in a loop or over runs of --once.

const LINUX = process.platform === 'linux';
const LOGS = { trends: 'trends.jsonl', disk: 'disk.jsonl', pulse: 'health-pulse.jsonl' };

const old = (node: string, ts: string) => `${JSON.stringify({ ts, node, mount: '/', status: 'healthy' })}\n`;
const linesOf = async (file: string) => (await readFile(file, 'utf8')).split('\n').filter((l) => l !== '');

test('collect --once with collect.retention drops the records older than it from trends, disk and pulse, and not again within the hour', { skip: !LINUX }, async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ collect: { retention: '1d' } }));
  const longAgo = new Date(Date.now() - 3 * 86_400_000).toISOString();
  const recent = new Date(Date.now() - 3_600_000).toISOString();
  for (const file of Object.values(LOGS)) await writeFile(path.join(dir, file), old('other', longAgo) + old('other', recent) + 'not json\n');

  const first = await runEstate(['collect', '--once', '--node', 'n1', '--data-dir', dir]);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stderr, '');
  for (const file of Object.values(LOGS)) {
    const lines = await linesOf(path.join(dir, file));
    assert.equal(lines.some((l) => l.includes(longAgo)), false, `${file}: the old record is gone`);
    assert.ok(lines.some((l) => l.includes(recent)), `${file}: the recent record stays`);
    assert.ok(lines.includes('not json'), `${file}: an undated line stays`);
    assert.ok(lines.some((l) => l.includes('"node":"n1"')), `${file}: the new sample is there`);
  }
  assert.ok(!Number.isNaN(Date.parse((await readFile(path.join(dir, 'collect', 'pruned-at'), 'utf8')).trim())));

  // Within the hour a run does not prune: an old record written now stays until the next pass.
  await appendFile(path.join(dir, LOGS.trends), old('other', longAgo));
  const second = await runEstate(['collect', '--once', '--node', 'n1', '--data-dir', dir]);
  assert.equal(second.code, 0, second.stderr);
  assert.ok((await linesOf(path.join(dir, LOGS.trends))).some((l) => l.includes(longAgo)));

  // A pass due (the last one over an hour ago) prunes it.
  await writeFile(path.join(dir, 'collect', 'pruned-at'), `${new Date(Date.now() - 2 * 3_600_000).toISOString()}\n`);
  const third = await runEstate(['collect', '--once', '--node', 'n1', '--data-dir', dir]);
  assert.equal(third.code, 0, third.stderr);
  assert.equal((await linesOf(path.join(dir, LOGS.trends))).some((l) => l.includes(longAgo)), false);
});

test('collect without collect.retention prunes nothing', { skip: !LINUX }, async (t) => {
  const dir = await tempDataDir(t);
  const longAgo = new Date(Date.now() - 3000 * 86_400_000).toISOString();
  await writeFile(path.join(dir, LOGS.trends), old('other', longAgo));
  const r = await runEstate(['collect', '--once', '--node', 'n1', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok((await linesOf(path.join(dir, LOGS.trends))).some((l) => l.includes(longAgo)));
});

test('serve --collect applies collect.retention too, and logs what it dropped', { skip: !LINUX }, async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ collect: { retention: '1d' } }));
  const longAgo = new Date(Date.now() - 3 * 86_400_000).toISOString();
  for (const file of Object.values(LOGS)) await writeFile(path.join(dir, file), old('other', longAgo));
  const running = startEstate(t, ['serve', '--collect', '--interval', '1s', '--port', '0', '--data-dir', dir, '--log-format', 'json']);
  await waitUntil('the old records are pruned', async () => {
    const lines = await linesOf(path.join(dir, LOGS.pulse));
    return lines.length > 0 && !lines.some((l) => l.includes(longAgo));
  });
  const stopped = await running.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  for (const file of Object.values(LOGS)) assert.equal((await linesOf(path.join(dir, file))).some((l) => l.includes(longAgo)), false, file);
  const pruned = stopped.stderr
    .split('\n')
    .filter((l) => l.includes('collect_pruned'))
    .map((l) => JSON.parse(l));
  assert.deepEqual(pruned.map((l) => l.dropped), [{ trends: 1, disk: 1, pulse: 1 }]);
});
