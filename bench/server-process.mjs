// Servers for the benchmarks: a child process that prints its URL.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';

/** Starts `node ARGS` and resolves with `{child, url}` once it prints an http://127.0.0.1:PORT URL. */
export function startServer(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let found = false;
    // Keep only the tail of what the server prints (an access log on stdout or stderr can be long).
    const keep = (c) => (out = (out + c).slice(-2000));
    child.stdout.on('data', (c) => {
      if (found) return keep(c);
      out += c;
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(out);
      if (!m) return;
      found = true;
      out = out.slice(-2000);
      resolve({ child, url: m[0] });
    });
    child.stderr.on('data', keep);
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${out.slice(-300)}`)));
  });
}

/** SIGTERM, then wait for the exit. */
export async function stopServer(server) {
  const exited = new Promise((r) => server.child.once('exit', r));
  server.child.kill('SIGTERM');
  await exited;
}

/** Peak (VmHWM) and current (VmRSS) resident set size of a process in MB, from /proc (Linux). */
export function memoryMb(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const mb = (field) => Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1]) / 1024);
    return { VmHWM: mb('VmHWM'), VmRSS: mb('VmRSS') };
  } catch {
    return { VmHWM: NaN, VmRSS: NaN };
  }
}

/**
 * `bin/estate serve` on a free loopback port over `dataDir`, quiet, with
 * `apiKey` as ESTATE_API_KEY and `env` added (a store URL); `nodeArgs` are
 * node's own options (`--cpu-prof`). Resolves once it prints its URL with
 * `{process, url, exited}` (`exited` resolves with its code and signal).
 */
export async function startEstateServe(bin, dataDir, apiKey, env = {}, nodeArgs = []) {
  const child = spawn(process.execPath, [...nodeArgs, bin, 'serve', '--host', '127.0.0.1', '--port', '0', '--data-dir', dataDir, '--quiet'], {
    env: { PATH: process.env.PATH ?? '', HOME: os.homedir(), ESTATE_API_KEY: apiKey, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let output = '';
  const url = await new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk;
      const m = /http:\/\/127\.0\.0\.1:\d+/.exec(output);
      if (m) resolve(m[0]);
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    exited.then(({ code }) => reject(new Error(`estate serve exited (${code}) before listening: ${output}`)));
  });
  return { process: child, url, exited };
}

/** The CPU time (ms) a process has used, from /proc (Linux). */
export function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** Waits until the process has used no CPU for `quietMs` (its background index build has ended); ms waited. */
export async function idle(pid, quietMs = 300) {
  const t0 = performance.now();
  let before = cpuMs(pid);
  for (;;) {
    await new Promise((r) => setTimeout(r, quietMs));
    const now = cpuMs(pid);
    if (now - before < 10) return performance.now() - t0 - quietMs;
    before = now;
  }
}
