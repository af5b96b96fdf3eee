import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { open, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { withFileLock } from '../src/core/file-lock.ts';
import { pruneFile } from '../src/core/retention/prune-file.ts';
import { runEstate, startEstate } from './helpers/cli.ts';
import { ROOT, tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// `estate prune --older-than D`: retention of the series logs (DESIGN.md 7a).
// The real CLI on real files; appenders and readers run while it rewrites.

const OLD = '2000-01-01T00:00:00.000Z';
const recent = () => new Date().toISOString();
const line = (record: Record<string, unknown>) => `${JSON.stringify(record)}\n`;

test('prune drops exactly the records dated before the cutoff; undated, corrupt and torn last lines are kept byte for byte', async (t) => {
  const dir = await tempDataDir(t);
  const now = recent();
  const kept = [
    line({ ts: now, cpu: 1 }),
    'not json at all\n',
    line({ cpu: 'no ts' }),
    line({ ts: 'yesterday-ish', cpu: 3 }),
    line({ ts: 12345, cpu: 4 }),
    '[1,2,3]\n',
    '\n',
    line({ ts: now, cpu: 5 }),
  ];
  const dropped = [line({ ts: OLD, cpu: 0 }), line({ ts: '2001-05-05T10:00:00+02:00', cpu: 2 })];
  const torn = `{"ts":"${OLD}","cpu":`;
  const text = [kept[0], kept[1], dropped[0], kept[2], dropped[1], ...kept.slice(3)].join('') + torn;
  const file = path.join(dir, 'trends.jsonl');
  await writeFile(file, text, { mode: 0o640 });

  const dry = await runEstate(['prune', '--older-than', '30d', '--log', 'trends', '--dry-run', '--json', '--data-dir', dir]);
  assert.equal(dry.code, 0, dry.stderr);
  assert.equal(dry.json.dry_run, true);
  assert.deepEqual(dry.json.logs.trends, { file: 'trends.jsonl', dropped: 2, kept: 8, undated: 6, bytes_before: Buffer.byteLength(text), bytes_after: Buffer.byteLength(kept.join('') + torn) });
  assert.equal(await readFile(file, 'utf8'), text, '--dry-run changes nothing');

  const r = await runEstate(['prune', '--older-than', '30d', '--json', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  assert.deepEqual(Object.keys(r.json.logs), ['trends', 'disk', 'pulse', 'builds']);
  assert.deepEqual(r.json.logs.trends, dry.json.logs.trends);
  for (const name of ['disk', 'pulse', 'builds']) assert.equal(r.json.logs[name].dropped, 0, `${name}: a missing log is nothing to drop`);
  assert.equal(await readFile(file, 'utf8'), kept.join('') + torn);
  assert.equal((await stat(file)).mode & 0o777, 0o640, 'the log keeps its mode');
  assert.deepEqual((await readdir(dir)).filter((f) => f.includes('trends')), ['trends.jsonl'], 'no temp file or lock left behind');

  // Nothing old left: the file is not rewritten (same inode).
  const before = await stat(file);
  const again = await runEstate(['prune', '--older-than', '30d', '--log', 'trends', '--data-dir', dir]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /^trends\.jsonl: dropped 0, kept 8 \(6 undated\), \d+ → \d+ bytes\n$/);
  assert.equal((await stat(file)).ino, before.ino);
});

test('prune keeps a line longer than 1 MiB (which readers skip) byte for byte, undated, without assembling it', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'builds.jsonl');
  const long = line({ ts: OLD, project: 'p', status: 'success', log: 'y'.repeat(3 * 1024 * 1024) });
  const text = line({ ts: OLD, project: 'p', status: 'failure' }) + long + line({ ts: recent(), project: 'p', status: 'success' });
  await writeFile(file, text);
  const r = await runEstate(['prune', '--older-than', '1d', '--log', 'builds', '--json', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual([r.json.logs.builds.dropped, r.json.logs.builds.kept, r.json.logs.builds.undated], [1, 2, 1]);
  assert.equal(await readFile(file, 'utf8'), text.slice(text.indexOf('\n') + 1));
});

test('prune: a bad duration or log name exits 2 with one line on stderr; the log is left alone', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'disk.jsonl');
  await writeFile(file, line({ ts: OLD, mount: '/', total_bytes: 1, used_bytes: 1, free_bytes: 0 }));
  const cases = [
    { args: ['--older-than', '30x'], message: /^estate: invalid --older-than "30x"/ },
    { args: ['--older-than', '0d'], message: /^estate: invalid --older-than "0d"/ },
    { args: ['--older-than', '30d', '--log', 'completions'], message: /^estate: --log: unknown log "completions"/ },
    { args: [], message: /^estate: estate prune needs --older-than DURATION/ },
  ];
  for (const c of cases) {
    await t.test(c.args.join(' ') || '(no --older-than)', async () => {
      const r = await runEstate(['prune', ...c.args, '--data-dir', dir]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, c.message);
      assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
    });
  }
  assert.match(await readFile(file, 'utf8'), /2000-01-01/);
});

test('prune without --older-than uses collect.retention from the config; a bad one is exit 2 naming its path', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'health-pulse.jsonl');
  const old = line({ ts: new Date(Date.now() - 3 * 3_600_000).toISOString(), status: 'healthy' });
  const fresh = line({ ts: recent(), status: 'degraded' });
  await writeFile(file, old + fresh);
  const config = path.join(dir, 'estate.config.json');
  await writeFile(config, JSON.stringify({ collect: { retention: '5000d' } }));
  const bad = await runEstate(['prune', '--data-dir', dir]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^estate: config .*estate\.config\.json is invalid: collect\.retention: [^\n]*3650d\n$/);
  await writeFile(config, JSON.stringify({ collect: { retention: '2h' } }));
  const r = await runEstate(['prune', '--log', 'pulse', '--json', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.older_than, '2h');
  assert.equal(r.json.logs.pulse.dropped, 1);
  assert.equal(await readFile(file, 'utf8'), fresh);
  // --older-than wins over the config.
  const flag = await runEstate(['prune', '--older-than', '1s', '--log', 'pulse', '--dry-run', '--json', '--data-dir', dir]);
  assert.equal(flag.json.older_than, '1s');
});

/**
 * A child appending lines to `file` one at a time (open O_APPEND, one write,
 * close), every other one dated long ago, until told to stop on stdin. With
 * the lock it appends as fast as it can. Without, it pauses about 1 ms
 * between lines (1,000 a second; a collector writes one every 10 s): a
 * writer without the lock appending flat out catches every rename midway (a
 * rename takes long enough for dozens of its lines), so its late lines
 * outlast pruneFile's rounds and are appended out of place, as its contract
 * says.
 */
function startAppender(t: { after: (fn: () => unknown) => void }, file: string, name: string, locked: boolean) {
  const lockImport = JSON.stringify(new URL(`file://${path.join(ROOT, 'src', 'core', 'file-lock.ts')}`).href);
  const script = `
    const { appendFileSync } = await import('node:fs');
    const { withFileLock } = ${locked ? `await import(${lockImport})` : '{}'};
    let stop = false;
    process.stdin.on('data', () => (stop = true));
    const write = (text) => appendFileSync(${JSON.stringify(file)}, text);
    for (let i = 0; !stop; i++) {
      const text = JSON.stringify({ ts: i % 2 ? ${JSON.stringify(OLD)} : new Date().toISOString(), w: ${JSON.stringify(name)}, i }) + '\\n';
      ${locked ? `await withFileLock(${JSON.stringify(`${file}.lock`)}, async () => write(text));` : 'write(text);'}
      if (i === 1) process.stdout.write('started\\n');
      await new Promise((r) => ${locked ? 'setImmediate(r)' : 'setTimeout(r, 1)'});
      if (stop) { process.stdout.write('wrote ' + (i + 1) + '\\n'); break; }
    }
    process.stdin.destroy();
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<number | null>((r) => child.on('close', r));
  return {
    started: () => waitUntil(`${name} appends (stderr: ${err})`, () => out.includes('started\n')),
    /** Stops it; resolves with how many lines it wrote. */
    stop: async () => {
      child.stdin.write('stop\n');
      const code = await exited;
      assert.equal(code, 0, `${name}: ${err}`);
      const m = /wrote (\d+)/.exec(out);
      assert.ok(m, `${name}: ${out}`);
      return Number(m[1]);
    },
  };
}

test('prune under concurrent appenders (with and without the lock) and readers: every line appended survives, in order, and no read fails', async (t) => {
  const dir = await tempDataDir(t);
  const trends = path.join(dir, 'trends.jsonl');
  const disk = path.join(dir, 'disk.jsonl');
  // A large old part, so that the copy takes a while.
  const history: string[] = [];
  for (let i = 0; i < 20_000; i++) history.push(line({ ts: OLD, w: 'history', i, pad: 'x'.repeat(100) }));
  await writeFile(trends, history.join(''));
  const snapshot = (ts: string, mount: string, i: number) => line({ ts, mount, total_bytes: 100, used_bytes: i, free_bytes: 100 - i });
  await writeFile(disk, Array.from({ length: 5000 }, (_, i) => snapshot(OLD, i % 2 ? '/' : '/data', i)).join('') + snapshot(recent(), '/data', 1) + snapshot(recent(), '/', 2));

  const server = await startServer(t, dir);
  const key = await newKey(dir);
  let reading = true;
  const failures: string[] = [];
  let reads = 0;
  const reader = (async () => {
    while (reading) {
      for (const url of ['/trends?limit=1000', '/disk?mount=/data&limit=50', '/trends/latest']) {
        const r = await server.get(url, { 'X-API-Key': key });
        reads++;
        if (r.status !== 200) failures.push(`${url}: ${r.status} ${r.text}`);
        else if (url.startsWith('/disk') && r.json.items.some((s: { mount: string }) => s.mount !== '/data')) failures.push(`${url}: another mount`);
      }
    }
  })();

  const appenders = [startAppender(t, trends, 'bare-1', false), startAppender(t, trends, 'bare-2', false), startAppender(t, trends, 'locked', true)];
  await Promise.all(appenders.map((a) => a.started()));
  const prunes = [];
  for (let round = 0; round < 3; round++) {
    // Each round has old lines appended since the last to drop: the log is rewritten each time.
    const size = (await stat(trends)).size;
    await waitUntil('an old line appended since the last prune', async () => (await readFile(trends, 'utf8')).slice(size).includes(OLD));
    const r = await runEstate(['prune', '--older-than', '1d', '--log', 'trends', '--log', 'disk', '--json', '--data-dir', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.json.logs.trends.dropped > 0, JSON.stringify(r.json));
    prunes.push(r.json);
  }
  const wrote = await Promise.all(appenders.map((a) => a.stop()));
  const last = await runEstate(['prune', '--older-than', '1d', '--data-dir', dir]);
  assert.equal(last.code, 0, last.stderr);
  reading = false;
  await reader;
  assert.deepEqual(failures, []);
  assert.ok(reads > 0);
  assert.equal(prunes[0]?.logs.trends.dropped >= 20_000, true, 'the history went in the first prune');
  assert.equal(prunes[0]?.logs.disk.dropped, 5000);

  const records = (await readFile(trends, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { ts: string; w: string; i: number });
  assert.ok(records.every((r) => r.ts !== OLD), 'every old line is gone after the last prune');
  ['bare-1', 'bare-2', 'locked'].forEach((name, k) => {
    const seen = records.filter((r) => r.w === name).map((r) => r.i);
    const expected = Array.from({ length: wrote[k] as number }, (_, i) => i).filter((i) => i % 2 === 0);
    assert.deepEqual([...seen].sort((a, b) => a - b), expected, `${name}: every recent line it wrote, once`);
    let highest = -1;
    let displaced = 0;
    for (const i of seen) {
      if (i < highest) displaced++;
      highest = Math.max(highest, i);
    }
    assert.equal(displaced, 0, `${name}: lines out of order`);
  });

  // Readers see the new content.
  const page = await server.get('/trends?limit=1000', { 'X-API-Key': key });
  assert.equal(page.status, 200);
  assert.ok(page.json.items.length > 0 && page.json.items.every((r: { ts: string }) => r.ts !== OLD), 'no pruned record is answered');
  const mounts = await server.get('/disk?mount=/data', { 'X-API-Key': key });
  assert.deepEqual(mounts.json.items.map((s: { used_bytes: number }) => s.used_bytes), [1]);
});

test('trends --watch sees a prune, then appends to the new file', async (t) => {
  const dir = await tempDataDir(t);
  const file = path.join(dir, 'trends.jsonl');
  await writeFile(file, line({ ts: OLD, cpu: 1 }) + line({ ts: recent(), cpu: 2 }));
  // A long interval: each new document can only come from the file watcher.
  const watch = startEstate(t, ['trends', '--watch', '--json', '--interval', '600', '--data-dir', dir]);
  await watch.waitForStdout('the first document', (out) => out.split('\n').length === 2);
  const r = await runEstate(['prune', '--older-than', '1d', '--log', 'trends', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  await watch.waitForStdout('the pruned document', (out) => out.split('\n').length === 3);
  await writeFile(file, line({ ts: recent(), cpu: 3 }), { flag: 'a' });
  await watch.waitForStdout('the document after an append', (out) => out.split('\n').length === 4);
  const stopped = await watch.stop('SIGINT');
  assert.equal(stopped.code, 0, stopped.stderr);
  const docs = stopped.stdout.trim().split('\n').map((l) => JSON.parse(l) as { items: { cpu: number }[] });
  assert.deepEqual(
    docs.map((d) => d.items.map((i) => i.cpu)),
    [[2, 1], [2], [3, 2]],
  );
});

test('two prunes of one log at once both succeed, and every recent line, including those appended meanwhile, is there once, in order', async (t) => {
  const dir = await tempDataDir(t);
  const trends = path.join(dir, 'trends.jsonl');
  // Old and recent lines interleaved, enough that the two copies overlap.
  const lines: string[] = [];
  for (let i = 0; i < 40_000; i++) lines.push(line({ ts: i % 2 ? OLD : recent(), w: 'history', i, pad: 'x'.repeat(60) }));
  await writeFile(trends, lines.join(''));
  const appender = startAppender(t, trends, 'locked', true);
  await appender.started();
  const prunes = await Promise.all([1, 2].map(() => runEstate(['prune', '--older-than', '1d', '--log', 'trends', '--json', '--data-dir', dir])));
  for (const r of prunes) assert.equal(r.code, 0, r.stderr);
  const [wrote] = await Promise.all([appender.stop()]);
  const last = await runEstate(['prune', '--older-than', '1d', '--log', 'trends', '--data-dir', dir]);
  assert.equal(last.code, 0, last.stderr);

  const records = (await readFile(trends, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as { ts: string; w: string; i: number });
  assert.ok(records.every((r) => r.ts !== OLD));
  assert.deepEqual(
    records.filter((r) => r.w === 'history').map((r) => r.i),
    Array.from({ length: 20_000 }, (_, i) => 2 * i),
    'the recent history, once, in order',
  );
  assert.deepEqual(
    records.filter((r) => r.w === 'locked').map((r) => r.i),
    Array.from({ length: wrote as number }, (_, i) => i).filter((i) => i % 2 === 0),
    'every recent line appended meanwhile, once, in order',
  );
  assert.deepEqual((await readdir(dir)).filter((name) => name.endsWith('.prune.tmp')), [], 'no temp file left');
});

test('prune reads and copies the log before it takes the writer lock, which it holds only for the rename', async (t) => {
  const dir = await tempDataDir(t);
  const trends = path.join(dir, 'trends.jsonl');
  await writeFile(trends, line({ ts: OLD, n: 1 }) + line({ ts: recent(), n: 2 }) + line({ ts: recent(), n: 3 }));
  // Another writer holds the log's lock until told to let go.
  const lockImport = JSON.stringify(new URL(`file://${path.join(ROOT, 'src', 'core', 'file-lock.ts')}`).href);
  const holder = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `const { withFileLock } = await import(${lockImport});
       await withFileLock(${JSON.stringify(`${trends}.lock`)}, async () => {
         process.stdout.write('held\\n');
         await new Promise((r) => process.stdin.once('data', r));
       }, { timeoutMs: 60_000 });
       process.stdin.destroy();`,
    ],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  t.after(() => holder.kill('SIGKILL'));
  let held = '';
  holder.stdout.setEncoding('utf8').on('data', (c: string) => (held += c));
  await waitUntil('the lock is held', () => held.includes('held'));

  const prune = runEstate(['prune', '--older-than', '1d', '--log', 'trends', '--json', '--data-dir', dir]);
  // While the lock is held, the kept lines are already in the prune's temp file; the log is untouched.
  const kept = line({ ts: '', n: 2 }).length;
  await waitUntil('the kept lines copied to the temp file while the lock is held', async () => {
    const temps = (await readdir(dir)).filter((name) => name.endsWith('.prune.tmp'));
    return temps.length === 1 && (await stat(path.join(dir, temps[0] as string))).size >= kept;
  });
  assert.match(await readFile(trends, 'utf8'), /"n":1/);
  await writeFile(trends, line({ ts: recent(), n: 4 }), { flag: 'a' });
  holder.stdin.write('go\n');
  const r = await prune;
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.logs.trends.dropped, 1);
  const after = (await readFile(trends, 'utf8')).split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { n: number }).n);
  assert.deepEqual(after, [2, 3, 4], 'the line appended while the prune waited is kept, after the others');
});

test('a late line is kept when the lock cannot be had for the round that would put it in place: appended, never dropped', async (t) => {
  const dir = await tempDataDir(t);
  const trends = path.join(dir, 'trends.jsonl');
  await writeFile(trends, line({ ts: OLD, n: 1 }) + line({ ts: recent(), n: 2 }));
  // A writer without the lock that opened the log before the prune's rename, so its next line lands in the old file.
  const early = await open(trends, 'a');
  t.after(() => early.close());
  let release: () => void = () => {};
  let holding: Promise<void> | undefined;
  const counts = await pruneFile(trends, new Date(Date.now() - 86_400_000), {
    lockTimeoutMs: 200,
    renamed: async (round) => {
      if (round !== 1) return;
      await early.write(line({ ts: recent(), n: 3 }));
      // Another writer takes the lock and keeps it past the prune's patience while it looks for late lines.
      await new Promise<void>((held) => {
        holding = withFileLock(`${trends}.lock`, () => {
          held();
          return new Promise<void>((r) => (release = r));
        });
      });
    },
  });
  release();
  await holding;
  assert.equal(counts.dropped, 1);
  const after = (await readFile(trends, 'utf8')).split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { n: number }).n);
  assert.deepEqual(after, [2, 3], 'the late line, appended without the lock');
});
