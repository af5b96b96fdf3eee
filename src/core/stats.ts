import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { StatsConfig } from '../config.ts';
import { EstateError } from '../errors.ts';
import type { SourceContext } from './external-sources.ts';
import { observeExternal, observing } from './observe.ts';

/** Most stdout read from the statistics command. */
export const MAX_STATS_OUTPUT = 1024 * 1024;
const STDERR_TAIL = 2000;

export interface StatsResult {
  /** What the command printed on stdout, parsed as JSON. */
  data: unknown;
  ran_at: string;
  duration_ms: number;
}

/**
 * The site statistics: the configured command's JSON output, kept for
 * `stats.cache_s` seconds; concurrent calls share one run. Not configured
 * is `unavailable` (503).
 */
export function siteStats(ctx: SourceContext): Promise<StatsResult> {
  const stats = ctx.config.stats;
  if (!stats) {
    throw new EstateError('unavailable', 'statistics are not configured: add "stats": {"command": ["python3", "site_stats.py"]} to estate.config.json');
  }
  return ctx.sources.stats.get('stats', () => runStatsCommand(stats, ctx.dataDir, ctx.now));
}

/** The program to run: a path with a slash resolves against the data dir; a bare name is looked up in PATH. */
export function statsProgram(command: readonly string[], dataDir: string): string {
  const program = command[0] ?? '';
  return program.includes('/') || program.includes(path.sep) ? path.resolve(dataDir, program) : program;
}

/**
 * Runs `stats.command` (argv, no shell) in the data dir and parses its
 * stdout as JSON. It must exit 0 within `stats.timeout_ms`; when it does
 * not, it is killed with SIGKILL, with every process it started (it runs
 * in a process group of its own), and the call fails with `gateway_timeout`.
 * Any other failure (cannot start, non-zero exit, not JSON, more than
 * 1 MiB of output) is `bad_gateway` with a message that says which.
 */
export function runStatsCommand(stats: StatsConfig, dataDir: string, now: () => Date = () => new Date()): Promise<StatsResult> {
  const observed = observing('external');
  return runCommand(stats, dataDir, now).then(
    (result) => {
      observeExternal(observed, 'stats', 'ok');
      return result;
    },
    (err: unknown) => {
      observeExternal(observed, 'stats', (err as { code?: unknown })?.code === 'gateway_timeout' ? 'timeout' : 'error');
      throw err;
    },
  );
}

function runCommand(stats: StatsConfig, dataDir: string, now: () => Date): Promise<StatsResult> {
  const program = statsProgram(stats.command, dataDir);
  const label = `the statistics command (${stats.command.join(' ')})`;
  const started = performance.now();
  return new Promise<StatsResult>((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(program, stats.command.slice(1), {
        cwd: dataDir,
        shell: false,
        detached: process.platform !== 'win32',
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (err) {
      reject(new EstateError('bad_gateway', `cannot run ${label}: ${(err as Error).message}`, { cause: err }));
      return;
    }
    const out: Buffer[] = [];
    let outBytes = 0;
    let errTail = '';
    let settled = false;
    const fail = (code: 'bad_gateway' | 'gateway_timeout', message: string, cause?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      killGroup(child);
      reject(new EstateError(code, message, cause === undefined ? {} : { cause }));
    };
    const timer = setTimeout(() => {
      fail('gateway_timeout', `${label} did not finish within ${stats.timeout_ms} ms (stats.timeout_ms) and was killed`);
    }, stats.timeout_ms);

    child.stdout?.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > MAX_STATS_OUTPUT) fail('bad_gateway', `${label} printed more than ${MAX_STATS_OUTPUT} bytes and was killed`);
      else out.push(chunk);
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      errTail = (errTail + chunk).slice(-STDERR_TAIL);
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'ENOENT' ? `${program} not found (a relative path resolves against the data dir ${dataDir})` : err.message;
      fail('bad_gateway', `cannot run ${label}: ${why}`, err);
    });
    child.on('close', (code, signal) => {
      if (settled) return;
      const stderr = lastLine(errTail);
      if (signal) return fail('bad_gateway', `${label} was killed by ${signal}${stderr ? `: ${stderr}` : ''}`);
      if (code !== 0) return fail('bad_gateway', `${label} exited with code ${code}${stderr ? `: ${stderr}` : ''}`);
      const text = Buffer.concat(out).toString('utf8').trim();
      if (!text) return fail('bad_gateway', `${label} printed nothing; it must print one JSON document on stdout`);
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch (err) {
        return fail('bad_gateway', `${label} printed output that is not JSON (${(err as Error).message}): ${excerpt(text)}`);
      }
      settled = true;
      clearTimeout(timer);
      resolve({ data, ran_at: now().toISOString(), duration_ms: Math.round(performance.now() - started) });
    });
  });
}

/**
 * SIGKILL to the child's process group: the child and whatever it started,
 * even when the child itself has exited (its group id cannot be reused while
 * a member lives). Without process groups, to the child alone.
 */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    if (process.platform === 'win32') throw new Error('no process groups');
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return excerpt(lines.at(-1) ?? '');
}

function excerpt(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
