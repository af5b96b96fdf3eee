import { spawn, spawnSync } from 'node:child_process';
import { BIN, CACHE_HOME } from './cli.ts';
import { PATIENCE_MS } from './wait-until.ts';

/** Whether `script` (util-linux) is here to give a child process a pseudo-terminal. */
export const HAS_SCRIPT = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

/** Why a pseudo-terminal test cannot run here (for skipWithout), or false. */
export const NO_TERMINAL: string | false = HAS_SCRIPT ? false : 'script(1) is not installed (apt-get install bsdutils)';

/**
 * Runs the real `estate` binary on a pseudo-terminal (`script -q -e -c CMD
 * /dev/null`), so its stdout and stderr are TTYs. Resolves with the exit code
 * and everything the terminal received (stdout and stderr together, `\r\n`
 * turned back into `\n`). A clean environment as runEstate's, without NO_COLOR
 * unless given, and a fixed COLUMNS.
 */
export function runEstateInTerminal(args: readonly string[], options: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<{ code: number | null; output: string }> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', XDG_CACHE_HOME: CACHE_HOME, TERM: 'xterm', COLUMNS: '200', ...options.env };
  const command = [process.execPath, BIN, ...args].map(shellQuote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? PATIENCE_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: output.replace(/\r\n/g, '\n') });
    });
  });
}

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
