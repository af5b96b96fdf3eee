import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { BIN, runEstate, startEstate } from './helpers/cli.ts';
import { ROOT, tempDataDir } from './helpers/data-dir.ts';

// The README's cron lines and the systemd unit it ships
// (contrib/estate-collect.service) run here through the real CLI, with the
// data dir they name replaced by a temp one: an option renamed or removed,
// or a unit that no longer starts a collector, fails this test instead of a
// reader's crontab.

const README = path.join(ROOT, 'README.md');
const UNIT = path.join(ROOT, 'contrib', 'estate-collect.service');

/** The text of the README's "Collecting" section. */
async function collectingSection(): Promise<string> {
  const readme = await readFile(README, 'utf8');
  const start = readme.indexOf('\n## Collecting\n');
  assert.ok(start >= 0, 'the README has a "Collecting" section');
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

/** The lines of the section's fenced blocks of `lang`. */
function blockLines(section: string, lang: string): string[] {
  const lines: string[] = [];
  for (const m of section.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))) lines.push(...(m[1] as string).split('\n').filter((l) => l.trim() !== ''));
  return lines;
}

/**
 * The estate arguments of a command line as cron or systemd would run it:
 * `estate` (or a path to it) and its words, up to a redirection; the value
 * of `--data-dir` replaced by `dataDir`. The lines are written without
 * quotes, so words are split on spaces (a quote fails the test: the parser
 * here would be wrong).
 */
function estateArgs(command: string, dataDir: string): string[] {
  assert.doesNotMatch(command, /["'\\$`]/, `a plain command line: ${command}`);
  const words = command.trim().split(/\s+/);
  assert.match(words[0] ?? '', /(^|\/)estate$/, `runs estate: ${command}`);
  const args: string[] = [];
  for (let i = 1; i < words.length; i++) {
    const word = words[i] as string;
    if (/^\d?>/.test(word)) break;
    args.push(word);
    if (word === '--data-dir') {
      assert.ok(i + 1 < words.length, `--data-dir has a value: ${command}`);
      args.push(dataDir);
      i++;
    }
  }
  assert.ok(args.includes(dataDir), `names a data dir: ${command}`);
  return args;
}

/** The crontab lines of the section, each as its five time fields and its command. */
async function cronLines(): Promise<{ line: string; command: string }[]> {
  const lines = blockLines(await collectingSection(), 'crontab');
  return lines.map((line) => {
    const m = /^((?:\S+\s+){5})(.*)$/.exec(line);
    assert.ok(m, `a crontab line: ${line}`);
    const fields = (m[1] as string).trim().split(/\s+/);
    for (const f of fields) assert.match(f, /^(\*|\d+)(\/\d+)?$/, `a cron time field: ${f} in ${line}`);
    return { line, command: m[2] as string };
  });
}

test("the README's cron line for estate collect --once takes a sample with the options it names", async (t) => {
  const lines = (await cronLines()).filter((l) => /\bestate collect\b/.test(l.command));
  assert.equal(lines.length, 1, 'one cron line for the collector');
  const { command } = lines[0]!;
  assert.match(command, /--once/);
  const dir = await tempDataDir(t);
  const args = estateArgs(command, dir);
  for (const expected of [1, 2]) {
    const r = await runEstate(args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    assert.equal(r.stderr, '');
    const points = (await readFile(path.join(dir, 'trends.jsonl'), 'utf8')).trim().split('\n');
    assert.equal(points.length, expected, 'each run appends one trend point');
  }
  // The second run had the first one's counters: each rate is there, or named
  // in the pulse as unreadable (a machine without a physical interface), never
  // left out unnamed as on a first sample.
  const lastOf = async (log: string) => JSON.parse((await readFile(path.join(dir, log), 'utf8')).trim().split('\n').at(-1)!);
  const [trend, pulse] = [await lastOf('trends.jsonl'), await lastOf('health-pulse.jsonl')];
  for (const rate of ['net_rx_bytes_s', 'net_tx_bytes_s', 'disk_read_bytes_s', 'disk_write_bytes_s']) {
    const named = String(pulse.checks?.collector?.value ?? '').includes(rate);
    assert.ok(rate in trend || named, `${rate} in the second sample, or named as unreadable: ${JSON.stringify({ trend, pulse })}`);
  }
});

test("the README's cron line for estate prune runs with collect.retention, the config the README shows", async (t) => {
  const section = await collectingSection();
  const lines = (await cronLines()).filter((l) => /\bestate prune\b/.test(l.command));
  assert.equal(lines.length, 1, 'one cron line for prune');
  const config = blockLines(section, 'json').join('\n');
  assert.match(config, /"retention"/);
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), config);
  const old = { ts: '2000-01-01T00:00:00.000Z', node: 'n', cpu_pct: 1 };
  const now = { ts: new Date().toISOString(), node: 'n', cpu_pct: 2 };
  await writeFile(path.join(dir, 'trends.jsonl'), `${JSON.stringify(old)}\n${JSON.stringify(now)}\n`);
  const args = estateArgs(lines[0]!.command, dir);
  const r = await runEstate(args);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  assert.equal(await readFile(path.join(dir, 'trends.jsonl'), 'utf8'), `${JSON.stringify(now)}\n`);
});

/** Each `Key=value` of the unit file's [Service] section (a key given twice keeps both). */
async function serviceSettings(): Promise<[string, string][]> {
  const text = await readFile(UNIT, 'utf8');
  const service = /^\[Service\]\n([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(text)?.[1];
  assert.ok(service, 'the unit has a [Service] section');
  return service
    .split('\n')
    .filter((l) => /^\w+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]);
}

test("the README's systemd unit is the shipped one's, and its ExecStart runs a collector that stops cleanly on SIGTERM", async (t) => {
  const settings = await serviceSettings();
  const readmeUnit = blockLines(await collectingSection(), 'ini').filter((l) => !l.startsWith('['));
  assert.ok(readmeUnit.length >= 4, 'the README shows the unit');
  for (const line of readmeUnit) assert.ok(settings.some(([k, v]) => `${k}=${v}` === line), `the unit file has the README's ${line}`);
  const get = (key: string) => settings.find(([k]) => k === key)?.[1];
  assert.equal(get('Restart'), 'on-failure');
  const exec = get('ExecStart');
  assert.ok(exec, 'the unit has an ExecStart');
  const dataDir = /--data-dir (\S+)/.exec(exec)?.[1];
  assert.ok(dataDir, 'ExecStart names the data dir');
  assert.ok(
    (get('ReadWritePaths') ?? '').split(/\s+/).includes(dataDir),
    `ReadWritePaths lets the collector write its data dir ${dataDir}`,
  );
  assert.doesNotMatch(exec, /--once/, 'the service runs the loop');

  const dir = await tempDataDir(t);
  const args = estateArgs(exec, dir);
  const collector = startEstate(t, args);
  await collector.waitForStdout('the first sample', (out) => out.includes('1 trend point'));
  const stopped = await collector.stop('SIGTERM');
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.equal(stopped.stderr, '');
  const points = (await readFile(path.join(dir, 'trends.jsonl'), 'utf8')).split('\n').filter(Boolean);
  assert.ok(points.length >= 1);
  for (const p of points) assert.doesNotThrow(() => JSON.parse(p), 'no torn line');
});

test('systemd-analyze verify accepts the unit (where systemd-analyze is installed)', async (t) => {
  const probe = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
  if (probe.error) return t.skip('systemd-analyze is not installed');
  // verify wants ExecStart's program to exist: this checkout's, run by this node.
  const text = (await readFile(UNIT, 'utf8')).replace(/^ExecStart=\S+/m, `ExecStart=${process.execPath} ${BIN}`);
  const dir = await tempDataDir(t);
  const copy = path.join(path.dirname(dir), 'estate-collect.service');
  await writeFile(copy, text);
  // --man=no: the man page need not be installed on the machine that runs the tests.
  const r = spawnSync('systemd-analyze', ['verify', '--man=no', copy], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  assert.equal(r.stderr.trim(), '', r.stderr);
});
