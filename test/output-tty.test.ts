import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { BIN, cliEnv } from './helpers/cli.ts';
import { DEMO_FIXTURE, liveDemoDataDir, tempDataDir } from './helpers/data-dir.ts';
import { skipWithout } from './helpers/required-tool.ts';
import { NO_TERMINAL, runEstateInTerminal } from './helpers/terminal.ts';

// Output on a real pseudo-terminal (script(1)): tables fit the terminal's
// width with rows on one line, nested values read as text, times as ages,
// sizes in units, and a state file as its text.

const SGR = /\x1b\[[0-9;]*m/g;

/** The lines a terminal shows: no colours, and of a line a progress line was erased on (CR, ESC[2K), what follows. */
function visibleLines(output: string): string[] {
  return output.replace(/^[^\n]*(?:\x1b\[2K|\r)/gm, '').replace(SGR, '').split('\n');
}

/** Runs estate under script(1) with the terminal's size set by stty, and no $COLUMNS. */
function runInSizedTerminal(args: readonly string[], cols: number): Promise<string> {
  const quote = (w: string) => `'${w.replace(/'/g, `'\\''`)}'`;
  const command = `stty cols ${cols} rows 50; exec ${[process.execPath, BIN, ...args].map(quote).join(' ')}`;
  const env = cliEnv({ TERM: 'xterm' });
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(output.replace(/\r\n/g, '\n')) : reject(new Error(`exit ${code}: ${output}`))));
  });
}

test('on a 60-column terminal, tables fit: no line wider than 60, one line per row, cut cells end in …', async (t) => {
  if (skipWithout(t, NO_TERMINAL)) return;
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  for (const args of [['agents'], ['trends', '--limit', '5'], ['pulse', '--limit', '5'], ['status'], ['state'], ['builds', '--limit', '5'], ['logs', '--limit', '5']]) {
    const r = await runEstateInTerminal([...args, '--data-dir', dir], { env: { COLUMNS: '60' } });
    const lines = visibleLines(r.output);
    for (const line of lines) assert.ok([...line].length <= 60, `${args.join(' ')}: ${JSON.stringify(line)} is ${[...line].length} wide`);
    if (args[0] === 'agents') {
      assert.equal(r.code, 0, r.output);
      assert.equal(lines.filter((l) => l.startsWith('│')).length, 8 + 1, 'the header and the 8 agents, each on one line');
    }
    if (args[0] === 'logs') assert.match(r.output, /…/, 'long messages are cut');
  }
});

test('the terminal\'s own width (stty cols) is used when $COLUMNS is not set', async (t) => {
  if (skipWithout(t, NO_TERMINAL)) return;
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const output = await runInSizedTerminal(['logs', '--limit', '3', '--data-dir', dir], 50);
  const lines = visibleLines(output).filter(Boolean);
  assert.ok(lines.length > 3, output);
  for (const line of lines) assert.ok([...line].length <= 50, JSON.stringify(line));
  assert.equal([...(lines[0] as string)].length, 50, 'the table uses the width it has');
});

test('on a terminal, a state file shows as its text, not as cut-off JSON', async (t) => {
  if (skipWithout(t, NO_TERMINAL)) return;
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const file = await readFile(path.join(dir, 'state', 'heartbeat.json'), 'utf8');
  const r = await runEstateInTerminal(['state', 'heartbeat', '--data-dir', dir], { env: { NO_COLOR: '1' } });
  assert.equal(r.code, 0, r.output);
  assert.ok(r.output.includes(`content:\n${file.trimEnd()}\n`), r.output);
  assert.doesNotMatch(r.output, /\{ +"nodes"/, 'no collapsed JSON');
});

test('on a terminal, times read as ages, sizes in IEC units, ratios with %, nested values as key=value; -o wide keeps them exact', async (t) => {
  if (skipWithout(t, NO_TERMINAL)) return;
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const disk = await runEstateInTerminal(['disk', '--limit', '3', '--data-dir', dir], { env: { NO_COLOR: '1' } });
  assert.match(disk.output, /│ \d{4}-\d\d-\d\d \d\d:\d\d +│/, 'a time more than a day ago: its date and minute');
  assert.match(disk.output, /\d+(\.\d)? [GT]iB/);
  assert.doesNotMatch(disk.output, /\d{4}-\d\d-\d\dT|\d{9,}/);
  // The demo's snapshots have one field besides the disk table's usual columns: the footer says -o wide shows it.
  assert.match(disk.output, /^3 items {2}· {2}limit: 3 {2}· {2}1 more column: -o wide$/m, 'the footer on the terminal');

  const pulse = await runEstateInTerminal(['pulse', '--limit', '1', '--data-dir', dir], { env: { NO_COLOR: '1' } });
  assert.match(pulse.output, /disk=ok, forge=ok/);
  assert.doesNotMatch(pulse.output, /\{"disk"/);

  const trends = await runEstateInTerminal(['trends', 'latest', '--data-dir', dir], { env: { NO_COLOR: '1' } });
  assert.match(trends.output, /cpu_pct +│ \d+(\.\d)?% /);

  const wide = await runEstateInTerminal(['disk', '--limit', '3', '-o', 'wide', '--data-dir', dir], { env: { NO_COLOR: '1' } });
  assert.match(wide.output, /2026-11-22T00:00:00\.000Z/);
  assert.match(wide.output, /\d{9,}/, 'exact byte counts');
});

test('colour on a terminal only, and never with NO_COLOR', async (t) => {
  if (skipWithout(t, NO_TERMINAL)) return;
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const coloured = await runEstateInTerminal(['pulse', '--limit', '2', '--data-dir', dir]);
  assert.match(coloured.output, /\x1b\[32mhealthy/);
  const plain = await runEstateInTerminal(['pulse', '--limit', '2', '--data-dir', dir], { env: { NO_COLOR: '1' } });
  assert.doesNotMatch(plain.output, /\x1b/);
});

/** The header cells of every headed table in `output`: the row just above a `├` rule. */
function headerCells(output: string): string[][] {
  const lines = visibleLines(output);
  return lines.flatMap((line, i) => (line.startsWith('│') && lines[i + 1]?.startsWith('├') ? [line.split('│').slice(1, -1).map((c) => c.trim())] : []));
}

test('on an 80-column terminal no header is cut: columns that do not fit are left out, and a line says -o wide shows them', async (t) => {
  if (skipWithout(t, NO_TERMINAL)) return;
  // The demo as served (times moved to now): the builds table needs builds of the last 7 days.
  const dir = await liveDemoDataDir(t);
  const commands = [['builds'], ['trends', '--limit', '5'], ['agents'], ['pulse', '--limit', '5'], ['disk', '--limit', '5'], ['events'], ['state'], ['logs', '--limit', '5'], ['work', 'feed', '--limit', '5'], ['publish', 'latest', '--limit', '5']];
  const runs = await Promise.all(commands.map((args) => runEstateInTerminal([...args, '--data-dir', dir], { env: { COLUMNS: '80', NO_COLOR: '1' } })));
  commands.forEach((args, i) => {
    const r = runs[i] as (typeof runs)[number];
    const name = args.join(' ');
    assert.equal(r.code, 0, `${name}: ${r.output}`);
    for (const line of visibleLines(r.output)) assert.ok([...line].length <= 80, `${name}: ${JSON.stringify(line)} is ${[...line].length} wide`);
    const heads = headerCells(r.output);
    assert.ok(heads.length > 0, `${name} draws a headed table: ${r.output}`);
    for (const cells of heads) for (const c of cells) assert.match(c, /^[a-z_0-9]+$/, `${name}: header cell ${JSON.stringify(c)} is a whole field name`);
  });

  // builds: its by_project table leaves out what does not fit, and says how to see it.
  const builds = runs[0] as (typeof runs)[number];
  const [byProject] = headerCells(builds.output.slice(builds.output.indexOf('by_project')));
  assert.deepEqual(byProject?.slice(0, 2), ['project', 'total']);
  assert.ok(!byProject?.includes('last_ts'), builds.output);
  const wideFields = ['project', 'total', 'success', 'failure', 'cancelled', 'success_rate', 'last_status', 'last_ts', 'avg_duration_s'];
  const more = wideFields.length - (byProject?.length ?? 0);
  assert.match(builds.output, new RegExp(`^${more} more columns?: -o wide$`, 'm'), builds.output);
  const wide = await runEstateInTerminal(['builds', '-o', 'wide', '--data-dir', dir], { env: { COLUMNS: '80', NO_COLOR: '1' } });
  assert.deepEqual(headerCells(wide.output.slice(wide.output.indexOf('by_project')))[0], wideFields, 'wide shows every field');

  // A list says it in its footer; --no-headers leaves out the same columns.
  const agents = runs[2] as (typeof runs)[number];
  assert.match(agents.output, /^8 items {2}· {2}\d+ more columns?: -o wide$/m, agents.output);
  const bare = await runEstateInTerminal(['agents', '--no-headers', '--data-dir', dir], { env: { COLUMNS: '80', NO_COLOR: '1' } });
  const firstRow = (output: string) => visibleLines(output).find((l) => l.startsWith('│ gardener'));
  assert.equal(firstRow(bare.output), firstRow(agents.output));

  // A record's keys are its headers: whole even at 50 columns, the values cut instead.
  const summary = await runEstateInTerminal(['summary', '--data-dir', dir], { env: { COLUMNS: '50', NO_COLOR: '1' } });
  const lines = visibleLines(summary.output);
  const record = lines.slice(0, lines.findIndex((l) => l.startsWith('└'))).filter((l) => l.includes('│ '));
  const keys = record.map((l) => (l.split('│')[1] as string).trim());
  assert.ok(keys.includes('trends.latest.requests_per_min'), summary.output);
  for (const key of keys) assert.match(key, /^[a-z_0-9.]+$/, `the key ${JSON.stringify(key)} is whole`);
  for (const line of lines) assert.ok([...line].length <= 50, JSON.stringify(line));
});

test('on a terminal, times five minutes apart read apart: a local date and minute past a day, an age in two units within one', async (t) => {
  if (skipWithout(t, NO_TERMINAL)) return;
  const dir = await tempDataDir(t);
  const minute = 60_000;
  const start = Math.floor(Date.now() / minute) * minute;
  const old = [0, 1, 2, 3, 4].map((i) => new Date(start - 5 * 86_400_000 + i * 5 * minute));
  const recent = [0, 1, 2, 3, 4].map((i) => new Date(start - (5 * 60 + 12) * minute + i * 5 * minute));
  const point = (ts: Date) => JSON.stringify({ ts: ts.toISOString(), node: 'hub', cpu_pct: 10 });
  await writeFile(path.join(dir, 'trends.jsonl'), `${[...old, ...recent].map(point).join('\n')}\n`);
  /** `2026-11-22 14:05` of `ts` shifted by `offsetMinutes` (the zone's offset from UTC). */
  const local = (ts: Date, offsetMinutes: number) => new Date(ts.getTime() + offsetMinutes * minute).toISOString().slice(0, 16).replace('T', ' ');
  for (const [tz, offset] of [['UTC', 0], ['Asia/Kolkata', 330]] as const) {
    const r = await runEstateInTerminal(['trends', '--limit', '10', '--data-dir', dir], { env: { COLUMNS: '80', NO_COLOR: '1', TZ: tz } });
    assert.equal(r.code, 0, r.output);
    const cells = visibleLines(r.output).filter((l) => l.startsWith('│ ') && l.includes('hub')).map((l) => (l.split('│')[1] as string).trim());
    assert.equal(cells.length, 10, r.output);
    assert.equal(new Set(cells).size, 10, `ten times, ten texts: ${cells.join(' | ')}`);
    for (const ts of old) assert.ok(cells.includes(local(ts, offset)), `${tz}: ${local(ts, offset)} in ${cells.join(' | ')}`);
    const ages = cells.filter((c) => c.endsWith(' ago'));
    assert.equal(ages.length, 5, cells.join(' | '));
    for (const age of ages) {
      const m = /^(\d+)h(?: (\d+)m)? ago$/.exec(age);
      assert.ok(m, `${age} is hours and minutes`);
      const minutes = Number(m[1]) * 60 + Number(m[2] ?? 0);
      assert.ok(recent.some((ts) => Math.abs((Date.now() - ts.getTime()) / minute - minutes) <= 1), `${age} is the age of a point`);
    }
  }
});

test('a wide terminal still says which columns only -o wide shows: those past the usual ones, not only those cut for width', async (t) => {
  if (skipWithout(t, NO_TERMINAL)) return;
  const dir = await tempDataDir(t);
  const point = Object.fromEntries([['ts', new Date().toISOString()], ...Array.from({ length: 11 }, (_, i) => [`field_${i}`, i])]);
  await writeFile(path.join(dir, 'trends.jsonl'), `${JSON.stringify(point)}\n`);
  const r = await runEstateInTerminal(['trends', '--limit', '1', '--data-dir', dir], { env: { NO_COLOR: '1', COLUMNS: '250' } });
  assert.equal(r.code, 0, r.output);
  const shown = (/^│ (ts .*)│$/m.exec(r.output)?.[1] ?? '').split('│').map((h) => h.trim()).filter(Boolean);
  assert.ok(shown.length > 1 && shown.length < 12, r.output);
  assert.match(r.output, new RegExp(`^1 item {2}· {2}limit: 1 {2}· {2}${12 - shown.length} more columns?: -o wide$`, 'm'), r.output);
  const wide = await runEstateInTerminal(['trends', '--limit', '1', '-o', 'wide', '--data-dir', dir], { env: { NO_COLOR: '1', COLUMNS: '250' } });
  assert.match(wide.output, /field_10/, wide.output);
  assert.doesNotMatch(wide.output, /more columns?: -o wide/, wide.output);
});
