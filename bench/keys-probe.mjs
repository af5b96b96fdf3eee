// The key store under concurrency, run as a field probe would (not part of
// `npm test`; test/keys-concurrency.test.ts runs a shorter version):
//
//   node bench/keys-probe.mjs [RUNS=20]
//
// Each run: a fresh data dir with 8 keys and a real `estate serve` on it;
// then 14 `estate keys create` and 5 `estate keys revoke` processes at once,
// while every key printed is sent to the server as soon as it exists (and
// the first 8 keys over and over). Then:
//
// - lost: `estate keys list --json` must hold all 22 keys (every create that
//   exited 0), the 5 revoked ones revoked, every other key answered 200 and
//   every revoked key 403;
// - torn: keys.json cut in place to its first 100 bytes (writeFileSync, the
//   same inode) must make the very next request with a valid key a 503 (and
//   /readyz 503) whose detail names the credential store, no path or file
//   name, and keep it so: it is checked again over one second, and the file
//   must still be the torn one (the server must not write it back).
//
// Prints one line per run and a summary; exits 1 when any run failed.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer, stopServer } from './server-process.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin', 'estate');
const RUNS = Number(process.argv[2] ?? 20);
const BEFORE = 8;
const CREATES = 14;
const REVOKES = 5;
const CACHE = mkdtempSync(path.join(os.tmpdir(), 'estate-probe-cache-'));
const ENV = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', XDG_CACHE_HOME: CACHE, NO_COLOR: '1' };

function estate(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function get(url, route, key) {
  const res = await fetch(url + route, { headers: key ? { 'X-API-Key': key } : {}, signal: AbortSignal.timeout(15_000) });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

const idOf = (key) => /^est_([0-9a-f]{12})_/.exec(key)?.[1];

async function run(n) {
  const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'estate-probe-')), 'data');
  const problems = [];
  let server;
  try {
    if ((await estate(['init', dir])).code !== 0) throw new Error('init failed');
    const keys = [];
    for (let i = 0; i < BEFORE; i++) {
      const r = await estate(['keys', 'create', '--user', `before${i}`, '--data-dir', dir]);
      if (r.code !== 0) throw new Error(`setup create: ${r.stderr}`);
      keys.push(r.stdout.trim());
    }
    server = await startServer([BIN, 'serve', '--port', '0', '--quiet', '--data-dir', dir], ENV);
    const url = server.url;

    // The server authenticates every key as soon as it exists, while the writers run.
    let writing = true;
    const checks = [];
    const hammer = (async () => {
      while (writing) {
        for (const key of keys.slice(0, BEFORE)) checks.push(get(url, '/trends', key).then((r) => r.status));
        await Promise.all(checks.splice(0));
      }
    })();
    const created = [];
    const revoked = keys.slice(0, REVOKES).map(idOf);
    const writers = [
      ...Array.from({ length: CREATES }, (_, i) =>
        estate(['keys', 'create', '--user', `probe${i}`, '--data-dir', dir]).then(async (r) => {
          if (r.code !== 0) return problems.push(`create ${i} exited ${r.code}: ${r.stderr.trim()}`);
          const key = r.stdout.trim();
          created.push(key);
          await get(url, '/trends', key);
        }),
      ),
      ...revoked.map((id) =>
        estate(['keys', 'revoke', id, '--data-dir', dir]).then((r) => {
          if (r.code !== 0) problems.push(`revoke ${id} exited ${r.code}: ${r.stderr.trim()}`);
        }),
      ),
    ];
    await Promise.all(writers);
    writing = false;
    await hammer;

    const listed = await estate(['keys', 'list', '--json', '--data-dir', dir]);
    const items = JSON.parse(listed.stdout).items;
    const byId = new Map(items.map((k) => [k.key_id, k]));
    const all = [...keys, ...created];
    const missing = all.filter((k) => !byId.has(idOf(k)));
    if (missing.length > 0) problems.push(`lost: list shows ${items.length} keys where ${all.length} were made (missing ${missing.map(idOf).join(', ')})`);
    for (const id of revoked) if (byId.get(id)?.revoked_at == null) problems.push(`revocation of ${id} lost`);
    for (const key of all) {
      const want = revoked.includes(idOf(key)) ? 403 : 200;
      const { status } = await get(url, '/trends', key);
      if (status !== want) problems.push(`key ${idOf(key)} answered ${status}, not ${want}`);
    }

    // Torn in place: the next request with a valid key must fail closed, and keep failing.
    const file = path.join(dir, 'keys.json');
    const torn = readFileSync(file).subarray(0, 100);
    writeFileSync(file, torn);
    const valid = created[0] ?? keys[BEFORE];
    const until = Date.now() + 1000;
    let first = true;
    do {
      const r = await get(url, '/trends', valid);
      const ready = await get(url, '/readyz');
      const when = first ? 'the next request' : 'a later request';
      if (r.status !== 503) problems.push(`torn store: ${when} with a valid key answered ${r.status}`);
      else if (!/credential store/.test(r.json?.detail ?? '') || /keys\.json|\//.test(r.json.detail)) problems.push(`torn store: detail "${r.json?.detail}"`);
      if (ready.status !== 503) problems.push(`torn store: /readyz answered ${ready.status} to ${when}`);
      first = false;
      if (problems.length > 0) break;
      await new Promise((r) => setTimeout(r, 100));
    } while (Date.now() < until);
    if (!readFileSync(file).equals(torn)) problems.push('torn store: keys.json was written back');
  } catch (err) {
    problems.push(`error: ${err.message}`);
  } finally {
    if (server) await stopServer(server);
    rmSync(path.dirname(dir), { recursive: true, force: true });
  }
  console.log(`run ${n}: ${problems.length === 0 ? 'ok' : `FAILED\n  ${[...new Set(problems)].join('\n  ')}`}`);
  return problems.length === 0;
}

let failures = 0;
const started = Date.now();
for (let n = 1; n <= RUNS; n++) if (!(await run(n))) failures++;
rmSync(CACHE, { recursive: true, force: true });
const load = os.loadavg().map((l) => l.toFixed(2)).join(' ');
console.log(`${failures} failures in ${RUNS} runs (${((Date.now() - started) / 1000).toFixed(0)} s; load average ${load} on ${os.cpus().length} CPUs)`);
process.exitCode = failures === 0 ? 0 : 1;
