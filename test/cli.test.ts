import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { VERSION } from '../src/version.ts';
import { runEstate } from './helpers/cli.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';

const oneLine = (s: string) => s.trim().split('\n').length === 1 && !s.includes('    at ');

test('a missing data dir is exit 2 with one line naming it, from flag, env and XDG default', async (t) => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'estate-missing-'));
  const cases: [string, string[], Record<string, string>, string][] = [
    ['--data-dir', ['trends', '--data-dir', path.join(root, 'a')], {}, path.join(root, 'a')],
    ['ESTATE_DATA_DIR', ['trends'], { ESTATE_DATA_DIR: path.join(root, 'b') }, path.join(root, 'b')],
    ['XDG_DATA_HOME', ['events'], { XDG_DATA_HOME: path.join(root, 'xdg') }, path.join(root, 'xdg', 'estate')],
    ['HOME', ['state'], { HOME: path.join(root, 'home') }, path.join(root, 'home', '.local', 'share', 'estate')],
  ];
  for (const [name, args, env, expected] of cases) {
    await t.test(name, async () => {
      const r = await runEstate(args, { env });
      assert.equal(r.code, 2);
      assert.ok(oneLine(r.stderr), r.stderr);
      assert.ok(r.stderr.includes(expected), r.stderr);
      assert.match(r.stderr, /estate init/);
      assert.equal(r.stdout, '');
    });
  }
  const notDir = path.join(root, 'file');
  await writeFile(notDir, 'x');
  const r = await runEstate(['trends', '--data-dir', notDir]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /is not a directory/);
});

test('estate init creates a data dir that every read command accepts', async (t) => {
  const root = await mkdtemp(path.join(os.tmpdir(), 'estate-init-'));
  const dir = path.join(root, 'new', 'estate');
  const init = await runEstate(['init', dir]);
  assert.equal(init.code, 0, init.stderr);
  const again = await runEstate(['init', dir]);
  assert.equal(again.code, 0, 'init is idempotent');
  const cases: [string[], number][] = [
    [['trends', '--json'], 0],
    [['disk', '--json'], 0],
    // The Nagios plugin codes (`estate pulse status --help`): no pulse yet is 3 unknown, and the answer is still printed.
    [['pulse', 'status', '--json'], 3],
    [['builds', '--json'], 0],
    [['events', '--json'], 0],
    [['state', '--json'], 0],
    [['health', '--json'], 0],
    [['trends', 'latest'], 3],
    [['disk', 'latest'], 3],
  ];
  for (const [args, code] of cases) {
    const r = await runEstate([...args, '--data-dir', dir]);
    assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    if (args[0] === 'pulse') assert.deepEqual([r.json, r.stderr], ['unknown', ''], 'pulse status prints its answer; the status is the exit code');
    else if (code === 0) assert.notEqual(r.json, undefined, args.join(' '));
    else assert.ok(oneLine(r.stderr));
  }
  t.after(() => import('node:fs/promises').then((fs) => fs.rm(root, { recursive: true, force: true })));
});

test('usage errors exit 2 with one line; --help and --version exit 0', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const cases: [string[], number, RegExp][] = [
    [['trends', '--limit', '0', '--data-dir', dir], 2, /^estate: invalid --limit: Input should be greater than or equal to 1\n$/],
    [['trends', '--limit', 'ten', '--data-dir', dir], 2, /invalid --limit: Input should be a valid integer/],
    [['builds', '--days', '400', '--data-dir', dir], 2, /invalid --days/],
    [['trends', '--nope'], 2, /unknown option '--nope'/],
    [['nope'], 2, /unknown command 'nope'/],
    [['trends', 'extra', 'args'], 2, /too many arguments/],
    [['keys', 'create', '--data-dir', dir], 2, /^estate: missing --user\n$/],
    [['serve', '--port', 'x', '--data-dir', dir], 2, /invalid --port x/],
  ];
  for (const [args, code, message] of cases) {
    const r = await runEstate(args);
    assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.ok(!r.stderr.includes('    at '), 'no stack trace');
  }
  const version = await runEstate(['--version']);
  assert.equal(version.code, 0);
  assert.equal(version.stdout.trim(), VERSION);
  const help = await runEstate(['--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Examples:/);
  assert.match(help.stdout, /trends/);
});

test('off a TTY, lists print as TSV without colour codes or footer', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const r = await runEstate(['pulse', '--limit', '3', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^ts\tstatus\tchecks\n.*\thealthy\t/);
  assert.equal(/\x1b\[/.test(r.stdout), false);
  assert.equal(r.stdout.split('\n').length, 3 + 2, 'header, 3 rows, final newline');
  assert.doesNotMatch(r.stdout, /3 items/);
});

test('--json output is the operation body, for every read command on the demo estate', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const cases: [string[], (j: any) => void][] = [
    [['trends', '--limit', '2'], (j) => assert.equal(j.items.length, 2)],
    [['disk', 'latest', '--mount', '/'], (j) => assert.equal(j.mount, '/')],
    [['pulse', 'status'], (j) => assert.equal(j, 'healthy')],
    [['events', '--limit', '5'], (j) => assert.ok(j.items.some((e: { kind: string }) => e.kind === 'node_stale'))],
    [['state', 'heartbeat', '--max-chars', '10'], (j) => assert.equal(j.content.length, 10)],
    [['info'], (j) => assert.equal(j.node, 'hub')],
  ];
  for (const [args, check] of cases) {
    const r = await runEstate([...args, '--json', '--data-dir', dir]);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    check(r.json);
  }
});

test('a reader that closes the pipe early ends the output quietly (no EPIPE stack trace)', async () => {
  const { spawn } = await import('node:child_process');
  const { BIN } = await import('./helpers/cli.ts');
  const child = spawn(process.execPath, [BIN, 'openapi'], { env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' } });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  child.stdout.destroy();
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 0);
  assert.equal(stderr, '');
});

test('the version estate reports is package.json\'s', async () => {
  const { readFile } = await import('node:fs/promises');
  const { ROOT } = await import('./helpers/data-dir.ts');
  const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(VERSION, pkg.version);
  const [short, long] = await Promise.all([runEstate(['-V']), runEstate(['--version'])]);
  assert.equal(short.stdout, `${pkg.version}\n`);
  assert.equal(long.stdout, `${pkg.version}\n`);
  const help = await runEstate(['--help', '--version']);
  assert.equal(help.code, 0);
});
