import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './data-dir.ts';
import { PATIENCE_MS } from './wait-until.ts';

export const BIN = path.join(ROOT, 'bin', 'estate');

/**
 * The cache folder of the CLIs these tests run (XDG_CACHE_HOME): one per
 * test process, removed when it ends, so the tests neither read nor fill the
 * user's own (what the CLI caches: src/checked-config-cache.ts).
 */
export const CACHE_HOME = path.join(os.tmpdir(), `estate-test-cache-${process.pid}`);
process.once('exit', () => rmSync(CACHE_HOME, { recursive: true, force: true }));

/** The environment of a CLI child: PATH, HOME and the test cache folder, NO_COLOR, then `extra`. */
export function cliEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', XDG_CACHE_HOME: CACHE_HOME, NO_COLOR: '1', ...extra };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (for --json runs), else undefined. */
  json: any;
}

/** Runs the real `estate` binary as a child process, with a clean environment (no ESTATE_*, NO_COLOR set). */
export function runEstate(args: readonly string[], options: { env?: Record<string, string>; input?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  const env = cliEnv(options.env);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? PATIENCE_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, stdout, stderr, json });
    });
    // A command that exits without reading its input closes the pipe first: not the test's failure (EPIPE).
    child.stdin.on('error', () => {});
    if (options.input === undefined) child.stdin.end();
    else child.stdin.end(options.input);
  });
}

export interface RunningEstate {
  /** Everything the process printed on stdout so far. */
  stdout: () => string;
  stderr: () => string;
  /** Waits until stdout satisfies `check` (generous timeout; fails with the output so far). */
  waitForStdout: (what: string, check: (stdout: string) => boolean, timeoutMs?: number) => Promise<void>;
  /** Sends SIGTERM (or `signal`) and resolves with the exit code and output once the process ends. */
  stop: (signal?: NodeJS.Signals) => Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** Starts a long-running `estate` command (`work feed --follow`) as a child process, killed after the test if still running. */
export function startEstate(t: { after: (fn: () => unknown) => void }, args: readonly string[], options: { env?: Record<string, string> } = {}): RunningEstate {
  const env = cliEnv(options.env);
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    stdout: () => stdout,
    stderr: () => stderr,
    waitForStdout: async (what, check, timeoutMs = PATIENCE_MS) => {
      const deadline = Date.now() + timeoutMs;
      while (!check(stdout)) {
        if (child.exitCode !== null) throw new Error(`estate ${args.join(' ')} exited ${child.exitCode} before ${what}; stderr: ${stderr}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stdout: ${stdout}; stderr: ${stderr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    stop: async (signal = 'SIGTERM') => {
      child.kill(signal);
      const code = await exited;
      return { code, stdout, stderr };
    },
  };
}
