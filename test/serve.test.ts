import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { test, type TestContext } from 'node:test';
import { listen } from '../src/server/listen.ts';
import { BIN, cliEnv } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { PATIENCE_MS } from './helpers/wait-until.ts';

interface Served {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

/** `estate serve ARGS` as a child process; resolves once it prints its URL. */
async function serve(t: TestContext, args: string[], env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
    env: cliEnv(env),
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL: ${out}`)), PATIENCE_MS);
    const on = (c: Buffer) => {
      out += c.toString();
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (m && (!args.includes('--demo') || /demo key/.test(out))) {
        clearTimeout(timer);
        resolve(m[0]);
      }
    };
    child.stdout.on('data', on);
    child.stderr.on('data', on);
    void exited.then((code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
  return { child, url, output: () => out, exited };
}

test('estate serve prints its URL, serves the API, and exits 0 on SIGTERM', async (t) => {
  const dir = await tempDataDir(t);
  const s = await serve(t, ['--data-dir', dir, '--host', '127.0.0.1'], { ESTATE_API_KEY: 'env-key' });
  const health = await fetch(`${s.url}/healthz`);
  assert.equal(health.status, 200);
  const trends = await fetch(`${s.url}/trends`, { headers: { 'X-API-Key': 'env-key' } });
  assert.equal(trends.status, 200);
  s.child.kill('SIGTERM');
  assert.equal(await s.exited, 0);
});

test('estate serve --demo serves a copy of the demo estate, moved to the present, with a working key', async (t) => {
  const s = await serve(t, ['--demo']);
  const key = /demo key \(user "demo"\): (\S+)/.exec(s.output())?.[1];
  assert.ok(key, s.output());
  const r = await fetch(`${s.url}/trends/latest`, { headers: { 'X-API-Key': key } });
  assert.equal(r.status, 200);
  const latest = (await r.json()) as { ts: string };
  assert.ok(Math.abs(Date.parse(latest.ts) - Date.now()) < 10 * 60_000, `latest point ${latest.ts} is recent`);
  const builds = (await (await fetch(`${s.url}/builds`, { headers: { 'X-API-Key': key } })).json()) as { total: number };
  assert.ok(builds.total > 0);
  s.child.kill('SIGINT');
  assert.equal(await s.exited, 0);
});

test('estate serve on a missing data dir or a taken port fails with one line', async (t) => {
  const dir = await tempDataDir(t);
  const missing = spawn(process.execPath, [BIN, 'serve', '--data-dir', `${dir}/nope`, '--port', '0']);
  let err = '';
  missing.stderr.on('data', (c: Buffer) => (err += c.toString()));
  assert.equal(await new Promise((r) => missing.on('exit', r)), 2);
  assert.match(err, /does not exist/);

  const s = await serve(t, ['--data-dir', dir]);
  const port = new URL(s.url).port;
  const taken = spawn(process.execPath, [BIN, 'serve', '--data-dir', dir, '--port', port]);
  let err2 = '';
  taken.stderr.on('data', (c: Buffer) => (err2 += c.toString()));
  assert.equal(await new Promise((r) => taken.on('exit', r)), 1);
  assert.match(err2, /^estate: port \d+ on 127\.0\.0\.1 is already in use: pass --port 0 to pick a free port/);
  s.child.kill('SIGTERM');
  assert.equal(await s.exited, 0);
});

test('close() lets an in-flight request finish, and refuses new connections', async () => {
  let release!: () => void;
  let arrived!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const reached = new Promise<void>((r) => (arrived = r));
  const running = await listen(
    async (_req, res) => {
      arrived();
      await gate;
      res.end('done');
    },
    { host: '127.0.0.1', port: 0 },
  );
  const inFlight = fetch(`${running.url}/slow`).then((r) => r.text());
  await reached;
  const closed = running.close();
  await assert.rejects(fetch(`${running.url}/new`, { signal: AbortSignal.timeout(2000) }));
  release();
  assert.equal(await inFlight, 'done');
  await closed;
});
