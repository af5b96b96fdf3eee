import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate, startEstate } from './helpers/cli.ts';
import { nodeDir, printedTs } from './helpers/collector.ts';
import { startFakeHub } from './helpers/fake-hub.ts';
import { waitUntil } from './helpers/wait-until.ts';

// `estate collect --url` (DESIGN.md 7a): the real CLI as a child process
// sending to a small real hub on 127.0.0.1 (helpers/fake-hub.ts), through
// the spool in a data dir that does not exist before the first run.

const LINUX = process.platform === 'linux';

const collectArgs = (url: string, dir: string, ...more: string[]) => ['collect', '--url', url, '--api-key', 'node-key', '--data-dir', dir, '--node', 'a', '--json', ...more];


/** The samples a collector printed with --json, one line each. */
const jsonLines = (stdout: string): any[] =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l));
/** How many samples the spool's bound dropped, as the printed samples say. */
const dropsIn = (samples: any[]): number => samples.reduce((n, s) => n + s.spool_dropped, 0);

/** The samples of the spool not yet acknowledged, read as the spool's state says (spool-state.ts). */
async function unsent(dir: string): Promise<string[]> {
  const text = await readFile(path.join(dir, 'collect', 'spool-a.jsonl'), 'utf8').catch(() => '');
  const state = JSON.parse(await readFile(path.join(dir, 'collect', 'spool-a.state.json'), 'utf8').catch(() => '{}'));
  const header = text.slice(0, text.indexOf('\n') + 1);
  const start = JSON.parse(header).spool === state.generation ? Math.max(state.offset, header.length) : header.length;
  return Buffer.from(text)
    .subarray(start)
    .toString()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l).trend.ts);
}

test('collect --once --url: an unreachable hub is one line on stderr and exit 0; the next run sends both samples, oldest first, and empties the spool', { skip: !LINUX }, async (t) => {
  const hub = await startFakeHub(t);
  await hub.stop();
  const dir = await nodeDir(t);
  const first = await runEstate(['collect', '--once', ...collectArgs(hub.url, dir).slice(1)]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stderr, /^estate collect: cannot reach http:\/\/127\.0\.0\.1:\d+: .*; the samples wait in the spool \(\d+ bytes\) for the next run\n$/);
  assert.deepEqual(await unsent(dir), [first.json.trend.ts]);

  await hub.start();
  const second = await runEstate(['collect', '--once', ...collectArgs(hub.url, dir).slice(1)]);
  assert.equal(second.code, 0, second.stderr);
  assert.equal(second.stderr, '');
  assert.deepEqual(hub.stored, [first.json.trend.ts, second.json.trend.ts]);
  assert.deepEqual(hub.requests.map((r) => r.apiKey), ['node-key']);
  assert.deepEqual(await unsent(dir), []);
});

test('collect --url: a hub stopped while the collector samples every 100 ms gets every sample once it is back, oldest first, no gap, none twice', { skip: !LINUX }, async (t) => {
  const COUNT = 60;
  const hub = await startFakeHub(t);
  await hub.stop();
  const dir = await nodeDir(t);
  const collector = startEstate(t, collectArgs(hub.url, dir, '--interval', '100ms'));
  await collector.waitForStdout(`${COUNT} samples`, (out) => printedTs(out).length >= COUNT);
  assert.equal(hub.stored.length, 0);
  await hub.start();
  await waitUntil(`the hub has the first ${COUNT} samples`, () => hub.stored.length >= COUNT);
  await waitUntil('the collector says the hub is back', () => /takes samples again/.test(collector.stderr()));
  const stopped = await collector.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  const sampled = printedTs(stopped.stdout);
  assert.deepEqual(hub.stored, sampled.slice(0, hub.stored.length), 'stored oldest first, without a gap');
  assert.equal(hub.duplicates, 0);
  const lines = stopped.stderr.split('\n').filter((l) => l !== '');
  assert.match(lines[0] ?? '', /cannot reach .*samples wait in the spool, retrying/);
  assert.ok(lines.some((l) => /takes samples again: \d+ sent/.test(l)), stopped.stderr);
  assert.ok(lines.length <= 4, `one line when the hub went away, one when it came back: ${stopped.stderr}`);

  // What was sampled after the last send goes with the next run.
  const last = await runEstate(['collect', '--once', ...collectArgs(hub.url, dir).slice(1)]);
  assert.equal(last.code, 0, last.stderr);
  assert.deepEqual(hub.stored, [...sampled, last.json.trend.ts]);
  assert.equal(hub.duplicates, 0);
});

test('collect --url: a hub whose answer is lost after it stored a batch gets the batch again, and stores nothing twice', { skip: !LINUX }, async (t) => {
  const hub = await startFakeHub(t);
  const dir = await nodeDir(t);
  hub.mode = { kind: 'store-then-drop' };
  const first = await runEstate(['collect', '--once', ...collectArgs(hub.url, dir).slice(1)]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stderr, /cannot reach .*wait in the spool/);
  assert.deepEqual(hub.stored, [first.json.trend.ts], 'the hub stored it; the collector could not know');
  assert.deepEqual(await unsent(dir), [first.json.trend.ts]);

  hub.mode = { kind: 'store' };
  const second = await runEstate(['collect', '--once', ...collectArgs(hub.url, dir).slice(1)]);
  assert.equal(second.code, 0, second.stderr);
  assert.deepEqual(hub.requests.at(-1)?.ts, [first.json.trend.ts, second.json.trend.ts]);
  assert.deepEqual(hub.stored, [first.json.trend.ts, second.json.trend.ts]);
  assert.equal(hub.duplicates, 1);
  assert.deepEqual(await unsent(dir), []);
});

test('collect --url: past collect.spool_max_bytes the oldest unsent samples are dropped, said on stderr and in the next pulse; the rest arrive oldest first', { skip: !LINUX }, async (t) => {
  const hub = await startFakeHub(t);
  await hub.stop();
  const dir = await nodeDir(t, { collect: { spool_max_bytes: 4096 } });
  const collector = startEstate(t, collectArgs(hub.url, dir, '--interval', '100ms'));
  await collector.waitForStdout('three drops, and a sample after one', (out) => {
    const samples = jsonLines(out);
    return dropsIn(samples) >= 3 && samples.some((s) => /spool was full/.test(s.pulse.checks.collector?.message ?? ''));
  });
  const stopped = await collector.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  assert.equal(stopped.stderr.match(/the spool is over collect\.spool_max_bytes \(4096 bytes\): dropped the \d+ oldest unsent samples?/g)?.length, 1, `said once: ${stopped.stderr}`);
  const sampled = printedTs(stopped.stdout);
  const waiting = await unsent(dir);
  assert.ok(waiting.length < sampled.length, 'some were dropped');
  assert.deepEqual(waiting, sampled.slice(sampled.length - waiting.length), 'the newest are kept, in order');
  const noted = jsonLines(stopped.stdout).find((s) => s.pulse.checks.collector?.message?.includes('spool was full'));
  assert.equal(noted.pulse.checks.collector.status, 'degraded');
  assert.match(noted.pulse.checks.collector.message, /\d+ oldest samples? dropped before the hub took/);

  await hub.start();
  const last = await runEstate(['collect', '--once', ...collectArgs(hub.url, dir).slice(1)]);
  assert.equal(last.code, 0, last.stderr);
  // Its own sample may push the oldest waiting ones out too (then it says so).
  const dropped = last.json.spool_dropped;
  assert.equal(dropped > 0, /dropped the \d+ oldest/.test(last.stderr), last.stderr);
  assert.deepEqual(hub.stored, [...waiting.slice(dropped), last.json.trend.ts]);
});

test('collect --url: a full spool is said at the first drop and in all once the hub takes samples again', { skip: !LINUX }, async (t) => {
  const hub = await startFakeHub(t);
  await hub.stop();
  const dir = await nodeDir(t, { collect: { spool_max_bytes: 4096 } });
  const collector = startEstate(t, collectArgs(hub.url, dir, '--interval', '100ms'));
  await collector.waitForStdout('three drops', (out) => dropsIn(jsonLines(out)) >= 3);
  await hub.start();
  await waitUntil('the collector says how many it dropped in all', () => /in all, the full spool dropped/.test(collector.stderr()));
  const stopped = await collector.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  const total = Number(/in all, the full spool dropped the (\d+) oldest/.exec(stopped.stderr)![1]);
  const printedDrops = dropsIn(jsonLines(stopped.stdout));
  assert.ok(total >= 3 && total <= printedDrops, `${total} of ${printedDrops}`);
  const sampled = printedTs(stopped.stdout);
  assert.deepEqual(hub.stored, sampled.slice(total, total + hub.stored.length), 'the oldest dropped, the rest in order');
});

for (const names of [true, false]) {
  test(`collect --url: a sample the hub refuses (422${names ? ' naming it' : ' naming only the body'}) is dropped and said; the others are stored`, { skip: !LINUX }, async (t) => {
    const hub = await startFakeHub(t);
    hub.namesRefused = names;
    await hub.stop();
    const dir = await nodeDir(t);
    const runs: Awaited<ReturnType<typeof runEstate>>[] = [];
    for (let i = 0; i < 3; i++) runs.push(await runEstate(['collect', '--once', ...collectArgs(hub.url, dir).slice(1)]));
    const [a, b, c] = runs.map((r) => r.json.trend.ts as string);
    await hub.start();
    hub.refuse.add(b!);
    const last = await runEstate(['collect', '--once', ...collectArgs(hub.url, dir).slice(1)]);
    assert.equal(last.code, 0, last.stderr);
    assert.equal(last.stderr, `estate collect: the hub refused the sample of ${b}: ${names ? `body.samples.1.trend.ts: more than 5 minutes in the future` : `${hub.url} refused a sample: body: more than 5 minutes in the future`}; dropped from the spool\n`);
    assert.deepEqual(hub.stored, [a, c, last.json.trend.ts]);
    assert.deepEqual(await unsent(dir), []);
  });
}

test('collect --once --url: a refused key (401) exits 4 with one line; the samples stay in the spool and go once the key is right', { skip: !LINUX }, async (t) => {
  const hub = await startFakeHub(t);
  hub.mode = { kind: 'status', status: 401, body: { detail: 'missing or invalid API key' } };
  const dir = await nodeDir(t);
  const first = await runEstate(['collect', '--once', ...collectArgs(hub.url, dir).slice(1)]);
  assert.equal(first.code, 4);
  assert.equal(first.stderr.split('\n').filter((l) => l).length, 1, first.stderr);
  assert.match(first.stderr, /answered 401: missing or invalid API key; the samples wait in the spool/);
  assert.deepEqual(await unsent(dir), [first.json.trend.ts]);
  hub.mode = { kind: 'store' };
  const second = await runEstate(['collect', '--once', ...collectArgs(hub.url, dir).slice(1)]);
  assert.equal(second.code, 0, second.stderr);
  assert.deepEqual(hub.stored, [first.json.trend.ts, second.json.trend.ts]);
});

test('collect --url: a hub answering 503 with Retry-After is tried again, said once, and gets everything when it takes samples', { skip: !LINUX }, async (t) => {
  const hub = await startFakeHub(t);
  hub.mode = { kind: 'status', status: 503, headers: { 'Retry-After': '1' } };
  const dir = await nodeDir(t);
  const collector = startEstate(t, collectArgs(hub.url, dir, '--interval', '100ms'));
  await waitUntil('the collector tried three times', () => hub.requests.length >= 3);
  hub.mode = { kind: 'store' };
  await waitUntil('the hub stored samples', () => hub.stored.length >= 5);
  const stopped = await collector.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
  const sampled = printedTs(stopped.stdout);
  assert.deepEqual(hub.stored, sampled.slice(0, hub.stored.length));
  assert.equal(stopped.stderr.match(/answered 503/g)?.length, 1, stopped.stderr);
});

for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
  test(`collect --url stopped by ${signal} while a send is in flight loses no sample, and leaves no torn line`, { skip: !LINUX }, async (t) => {
    const hub = await startFakeHub(t);
    hub.mode = { kind: 'hold' };
    const dir = await nodeDir(t);
    const collector = startEstate(t, collectArgs(hub.url, dir, '--interval', '100ms'));
    await waitUntil('a send is in flight and 5 samples are taken', () => hub.requests.length >= 1 && printedTs(collector.stdout()).length >= 5);
    const stopped = await collector.stop(signal);
    if (signal === 'SIGTERM') assert.equal(stopped.code, 0, stopped.stderr);
    const sampled = printedTs(stopped.stdout);
    const spool = await readFile(path.join(dir, 'collect', 'spool-a.jsonl'), 'utf8');
    assert.ok(spool.endsWith('\n'), 'no torn last line');
    const waiting = await unsent(dir);
    assert.deepEqual(waiting.slice(0, sampled.length), sampled, 'every sample printed is still in the spool');

    hub.mode = { kind: 'store' };
    const last = await runEstate(['collect', '--once', ...collectArgs(hub.url, dir).slice(1)]);
    assert.equal(last.code, 0, last.stderr);
    assert.deepEqual(hub.stored, [...waiting, last.json.trend.ts]);
    assert.equal(hub.duplicates, 0);
  });
}

test('collect --url with --store is one line and exit 2', async (t) => {
  const dir = await nodeDir(t);
  const r = await runEstate(['collect', '--once', '--url', 'http://127.0.0.1:9', '--store', 'data-dir', '--data-dir', dir]);
  assert.equal(r.code, 2);
  assert.equal(r.stderr.split('\n').filter((l) => l).length, 1, r.stderr);
  assert.match(r.stderr, /--url sends the samples to a hub and --store writes them to a store/);
});

test('a spool left by a crash is sent whole: a state of an older generation (a compaction cut short) sends from the start; a torn last line is never sent', { skip: !LINUX }, async (t) => {
  const hub = await startFakeHub(t);
  const dir = await nodeDir(t, {});
  const sample = (ts: string) => ({ trend: { ts, node: 'a' }, disks: [], pulse: { ts, node: 'a', status: 'healthy', checks: {} } });
  const [t1, t2] = ['2026-01-01T00:00:00.000Z', '2026-01-01T00:00:10.000Z'];
  await mkdir(path.join(dir, 'collect'));
  const header = `${JSON.stringify({ spool: 'new-generation' })}\n`;
  await writeFile(path.join(dir, 'collect', 'spool-a.jsonl'), `${header}${JSON.stringify(sample(t1))}\n${JSON.stringify(sample(t2))}\n{"trend":{"ts":"2026-01-01T00:00:2`);
  // The state of the spool before the compaction: its offset means nothing in the new file.
  await writeFile(path.join(dir, 'collect', 'spool-a.state.json'), JSON.stringify({ generation: 'old-generation', offset: 100_000, dropped: 0 }));
  const r = await runEstate(['collect', '--once', ...collectArgs(hub.url, dir).slice(1)]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(hub.stored, [t1, t2, r.json.trend.ts]);
  assert.deepEqual(hub.requests.flatMap((q) => q.ts), [t1, t2, r.json.trend.ts], 'the torn line was not sent');
  assert.match(r.stderr, /^estate collect: 1 line of the spool that was not a sample \(a torn write\) skipped\n$/);
  assert.deepEqual(await unsent(dir), []);
});

// The acknowledgement's state is renamed in without an fsync (spool-state.ts): a crash may leave the state of before it, or an empty file.
for (const [lost, state] of [
  ['left empty', (_before: string) => ''],
  ['back to the one before the last acknowledgement', (before: string) => before],
] as const) {
  test(`a spool state ${lost} by a crash sends the acknowledged samples again, and the hub stores each once`, { skip: !LINUX }, async (t) => {
    const hub = await startFakeHub(t);
    const dir = await nodeDir(t);
    const stateFile = path.join(dir, 'collect', 'spool-a.state.json');
    const first = await runEstate(['collect', '--once', ...collectArgs(hub.url, dir).slice(1)]);
    assert.equal(first.code, 0, first.stderr);
    const before = await readFile(stateFile, 'utf8');
    const second = await runEstate(['collect', '--once', ...collectArgs(hub.url, dir).slice(1)]);
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(await unsent(dir), []);
    await writeFile(stateFile, state(before));
    const third = await runEstate(['collect', '--once', ...collectArgs(hub.url, dir).slice(1)]);
    assert.equal(third.code, 0, third.stderr);
    const resent = lost === 'left empty' ? [first.json.trend.ts, second.json.trend.ts] : [second.json.trend.ts];
    assert.deepEqual(hub.requests.at(-1)?.ts, [...resent, third.json.trend.ts], 'sent again from where the state says, never past it');
    assert.deepEqual(hub.stored, [first.json.trend.ts, second.json.trend.ts, third.json.trend.ts]);
    assert.equal(hub.duplicates, resent.length);
    assert.deepEqual(await unsent(dir), []);
  });
}

test('an acknowledged spool is compacted: the file stays near collect.spool_max_bytes however many samples went through it', { skip: !LINUX }, async (t) => {
  const hub = await startFakeHub(t);
  const dir = await nodeDir(t, { collect: { spool_max_bytes: 4096 } });
  const generations = new Set<string>();
  for (let i = 0; i < 12; i++) {
    const r = await runEstate(['collect', '--once', ...collectArgs(hub.url, dir).slice(1)]);
    assert.equal(r.code, 0, r.stderr);
    const text = await readFile(path.join(dir, 'collect', 'spool-a.jsonl'), 'utf8');
    generations.add(JSON.parse(text.slice(0, text.indexOf('\n'))).spool);
    assert.ok(Buffer.byteLength(text) <= 4096 + 1024 + 4096, `spool file ${Buffer.byteLength(text)} bytes`);
  }
  assert.equal(hub.stored.length, 12);
  assert.ok(generations.size > 1, 'rewritten without its acknowledged head');
  assert.deepEqual(await unsent(dir), []);
});

test('collect with ESTATE_URL and ESTATE_API_KEY sends to that hub, its spool in ESTATE_DATA_DIR; ESTATE_DATA_DIR alone writes the local series', { skip: !LINUX }, async (t) => {
  const hub = await startFakeHub(t);
  const dir = await nodeDir(t);
  const env = { ESTATE_URL: hub.url, ESTATE_API_KEY: 'env-key', ESTATE_DATA_DIR: dir };
  const sent = await runEstate(['collect', '--once', '--node', 'a', '--json'], { env });
  assert.equal(sent.code, 0, sent.stderr);
  assert.deepEqual(hub.stored, [sent.json.trend.ts]);
  assert.deepEqual(hub.requests.map((r) => r.apiKey), ['env-key']);
  assert.deepEqual(await unsent(dir), []);

  const local = await runEstate(['collect', '--once', '--node', 'a', '--json'], { env: { ESTATE_DATA_DIR: dir } });
  assert.equal(local.code, 0, local.stderr);
  assert.equal(hub.requests.length, 1);
  assert.match(await readFile(path.join(dir, 'trends.jsonl'), 'utf8'), new RegExp(local.json.trend.ts));
});
