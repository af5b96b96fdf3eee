import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { BIN, cliEnv } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey } from './helpers/server.ts';
import { skipWithout } from './helpers/required-tool.ts';
import { PATIENCE_MS } from './helpers/wait-until.ts';
import { NO_TERMINAL } from './helpers/terminal.ts';

// `estate serve` as an operator meets it: the real binary, its output on a
// pipe or on a pseudo-terminal (util-linux `script`), stopped with ^C.

interface Serving {
  /** stdout and stderr together (on a terminal they are one stream), `\r\n` as `\n`. */
  output: () => string;
  stderr: () => string;
  waitFor: (what: RegExp) => Promise<string>;
  /** ^C: typed on the terminal, or SIGINT on a pipe. */
  interrupt: () => void;
  exited: Promise<number | null>;
}

/** A fresh directory for the child's TMPDIR (where `--demo` copies the demo estate), removed after the test. */
async function freshTmp(t: TestContext): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'estate-serve-cli-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** `estate ARGS` on a pipe (terminal: false) or on a pseudo-terminal; killed after the test if still running. */
function start(t: TestContext, args: string[], options: { terminal: boolean; env?: Record<string, string> }): Serving {
  const env = cliEnv({ TERM: 'xterm', ...options.env });
  const command = [process.execPath, BIN, ...args].map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = options.terminal
    ? // `exec`: estate, not a shell waiting on it, gets the terminal's ^C.
      spawn('script', ['-q', '-e', '-c', `exec ${command}`, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    output += c;
    stderr += c;
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const text = () => output.replace(/\r\n/g, '\n');
  return {
    output: text,
    stderr: () => stderr,
    waitFor: async (what) => {
      const deadline = Date.now() + PATIENCE_MS;
      for (;;) {
        const m = what.exec(text());
        if (m) return m[0];
        if (child.exitCode !== null) throw new Error(`estate exited ${child.exitCode} before ${what}: ${text()}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${text()}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    interrupt: () => (options.terminal ? child.stdin.write('\x03') : child.kill('SIGINT')),
    exited,
  };
}

/** A port on 127.0.0.1 held by another server until the test ends. */
async function takenPort(t: TestContext): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as net.AddressInfo).port;
}

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: cliEnv(env) });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('serve --demo on a taken port says so in one line naming --port 0, exits 1, and leaves no temp copy', async (t) => {
  const port = await takenPort(t);
  const tmp = await freshTmp(t);
  const r = await run(['serve', '--demo', '--port', String(port)], { TMPDIR: tmp });
  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stderr, `estate: port ${port} on 127.0.0.1 is already in use: pass --port 0 to pick a free port, or another --port\n`);
  assert.deepEqual(await readdir(tmp), [], 'the demo copy is removed');
});

test('serve over a data dir on a taken port says so in one line naming --port 0, exit 1', async (t) => {
  const port = await takenPort(t);
  const dir = await tempDataDir(t);
  const r = await run(['serve', '--data-dir', dir, '--port', String(port)], {});
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^estate: port \d+ on 127\.0\.0\.1 is already in use: pass --port 0 to pick a free port, or another --port\n$/);
});

test('the warm-up before listening leaves nothing behind: no node, no series line in the served data dir, no temp dir', async (t) => {
  const tmp = await freshTmp(t);
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const s = start(t, ['serve', '--data-dir', dir, '--port', '0'], { terminal: false, env: { TMPDIR: tmp } });
  const url = (await s.waitFor(/at http:\/\/127\.0\.0\.1:\d+/)).slice('at '.length);
  assert.deepEqual(await readdir(tmp), [], 'the warm-up data dir is removed before the server listens');
  const nodes = await fetch(`${url}/nodes`, { headers: { 'X-API-Key': key } });
  assert.equal(nodes.status, 200);
  assert.deepEqual(((await nodes.json()) as { items: unknown[] }).items, []);
  for (const file of ['trends.jsonl', 'disk.jsonl', 'health-pulse.jsonl']) assert.equal(await readFile(path.join(dir, file), 'utf8').catch(() => ''), '', file);
  s.interrupt();
  assert.equal(await s.exited, 0);
});

const unprivilegedStart = await readFile('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8').then(Number, () => 1024);
test(
  'serve on a port it may not bind says why and suggests --port 0, exit 1',
  { skip: process.getuid?.() === 0 ? 'root may bind any port' : unprivilegedStart <= 1 ? 'every port is unprivileged here' : false },
  async (t) => {
    const dir = await tempDataDir(t);
    const r = await run(['serve', '--data-dir', dir, '--port', '1'], {});
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^estate: not allowed to listen on 127\.0\.0\.1:1 \(ports below 1024 need privileges\): pass --port 0/);
  },
);

test('the demo banner lists /status, /hq/work and /api/docs and a quoted curl line that works pasted into sh; ^C removes the copy', async (t) => {
  const tmp = await freshTmp(t);
  const s = start(t, ['serve', '--demo', '--port', '0'], { terminal: false, env: { TMPDIR: tmp } });
  const curl = await s.waitFor(/^ {2}try: curl .*$/m);
  const url = /at (http:\/\/127\.0\.0\.1:\d+)$/m.exec(s.output())?.[1];
  const key = /demo key \(user "demo"\): (\S+)$/m.exec(s.output())?.[1];
  assert.ok(url && key, s.output());
  for (const page of ['/status', '/hq/work', '/api/docs']) {
    assert.ok(s.output().includes(`${url}${page}\n`), `${page} in ${s.output()}`);
    assert.equal((await fetch(`${url}${page}`)).status, 200, page);
  }
  assert.equal(curl, `  try: curl -H 'X-API-Key: ${key}' '${url}/trends?limit=5'`);
  // What a POSIX shell makes of the line: the words curl would get.
  const words = execFileSync('sh', ['-c', `curl() { printf '%s\\n' "$@"; }; ${curl.replace(/^ {2}try: /, '')}`], { encoding: 'utf8' });
  assert.deepEqual(words.split('\n').slice(0, -1), ['-H', `X-API-Key: ${key}`, `${url}/trends?limit=5`]);
  assert.equal((await fetch(`${url}/trends?limit=5`, { headers: { 'X-API-Key': key } })).status, 200);
  assert.equal((await readdir(tmp)).length, 1, 'the demo copy is there while serving');
  s.interrupt();
  assert.equal(await s.exited, 0);
  assert.deepEqual(await readdir(tmp), []);
});

test('a second ^C while serve --demo drains ends it at once, still removing the temp copy', async (t) => {
  const tmp = await freshTmp(t);
  const s = start(t, ['serve', '--demo', '--port', '0'], { terminal: false, env: { TMPDIR: tmp } });
  await s.waitFor(/try: curl/);
  const url = new URL(/at (http:\/\/127\.0\.0\.1:\d+)$/m.exec(s.output())?.[1] ?? '');
  const key = /^demo key \(user "demo"\): (\S+)$/m.exec(s.output())?.[1] ?? '';
  // A write whose body never comes keeps the drain waiting. The server's
  // `100 Continue` says it holds the request (not a fixed wait: under load
  // the server may take seconds to accept the connection).
  const socket = net.connect(Number(url.port), '127.0.0.1');
  t.after(() => socket.destroy());
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.on('connect', resolve));
  const continued = new Promise<void>((resolve) => {
    let seen = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      seen += chunk;
      if (seen.startsWith('HTTP/1.1 100 Continue')) resolve();
    });
  });
  socket.write(`POST /work/complete HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n`);
  await continued;
  s.interrupt();
  await s.waitFor(/SIGINT received, draining requests/);
  s.interrupt();
  assert.equal(await s.exited, 130);
  assert.deepEqual(await readdir(tmp), []);
});

test('on a terminal, serve prints one short line per request, credentials redacted', async (t) => {
  if (skipWithout(t, NO_TERMINAL)) return;
  const dir = await tempDataDir(t);
  const key = await newKey(dir, 'alice');
  const s = start(t, ['serve', '--data-dir', dir, '--port', '0'], { terminal: true });
  const url = (await s.waitFor(/http:\/\/127\.0\.0\.1:\d+/)).trim();
  assert.equal((await fetch(`${url}/trends?limit=5`, { headers: { 'X-API-Key': key } })).status, 200);
  await s.waitFor(/^\d\d:\d\d:\d\d GET \/trends\?limit=5 200 \d+ms alice$/m);
  assert.equal((await fetch(`${url}/trends?limit=2&api_key=${key}`)).status, 200);
  await s.waitFor(/^\d\d:\d\d:\d\d GET \/trends\?limit=2&api_key=REDACTED 200 \d+ms alice$/m);
  assert.equal((await fetch(`${url}/nosuch`)).status, 404);
  await s.waitFor(/^\d\d:\d\d:\d\d GET \/nosuch 404 \d+ms$/m);
  assert.ok(!s.output().includes(key), 'the key is never shown');
  assert.ok(!s.output().includes('{"'), 'no JSON lines on a terminal');
  s.interrupt();
  assert.equal(await s.exited, 0);
});

test('on a terminal, serve --quiet prints no request lines but still warnings', async (t) => {
  if (skipWithout(t, NO_TERMINAL)) return;
  const dir = await tempDataDir(t);
  const key = await newKey(dir, 'alice');
  const s = start(t, ['serve', '--data-dir', dir, '--port', '0', '--quiet'], { terminal: true });
  const url = (await s.waitFor(/http:\/\/127\.0\.0\.1:\d+/)).trim();
  assert.equal((await fetch(`${url}/trends`, { headers: { 'X-API-Key': key } })).status, 200);
  // A refused key is logged as a warning after the request before it would have been.
  assert.equal((await fetch(`${url}/trends`, { headers: { 'X-API-Key': 'est_000000000000_wrongwrongwrongwrongwrongwrong' } })).status, 403);
  await s.waitFor(/^\d\d:\d\d:\d\d WARN auth_failed .*$/m);
  assert.doesNotMatch(s.output(), /GET \/trends/);
  s.interrupt();
  assert.equal(await s.exited, 0);
});

test('on a terminal, --log-format json keeps JSON lines', async (t) => {
  if (skipWithout(t, NO_TERMINAL)) return;
  const dir = await tempDataDir(t);
  const s = start(t, ['serve', '--data-dir', dir, '--port', '0', '--log-format', 'json'], { terminal: true });
  const url = (await s.waitFor(/http:\/\/127\.0\.0\.1:\d+/)).trim();
  await fetch(`${url}/healthz`);
  const line = await s.waitFor(/^\{.*"event":"request".*\}$/m);
  assert.equal(JSON.parse(line).path, '/healthz');
  s.interrupt();
  assert.equal(await s.exited, 0);
});

test('on a pipe, serve logs JSON lines by default, text with --log-format text, and no request lines with --quiet', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir, 'alice');
  const cases = [
    { flags: [], line: /^\{.*"event":"request".*\}$/m },
    { flags: ['--log-format', 'text'], line: /^\d\d:\d\d:\d\d GET \/trends\?api_key=REDACTED 200 \d+ms alice$/m },
    { flags: ['--quiet'], line: undefined },
  ];
  for (const { flags, line } of cases) {
    const s = start(t, ['serve', '--data-dir', dir, '--port', '0', ...flags], { terminal: false });
    const url = (await s.waitFor(/http:\/\/127\.0\.0\.1:\d+/)).trim();
    assert.equal((await fetch(`${url}/trends?api_key=${key}`)).status, 200);
    if (line) await s.waitFor(line);
    s.interrupt();
    assert.equal(await s.exited, 0);
    assert.ok(!s.stderr().includes(key), 'the key is never logged');
    if (!flags.length) {
      const access = s.stderr().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
      assert.equal(access[0].path, '/trends?api_key=REDACTED');
      assert.equal(access[0].user, 'alice');
    }
    if (flags.includes('--quiet')) assert.doesNotMatch(s.stderr(), /trends/, `${flags}: ${s.stderr()}`);
  }
});
