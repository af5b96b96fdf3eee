import { fstatSync, statSync, writeSync } from 'node:fs';

// The entry: the only place that touches process.argv, the real streams and
// process exit status.

/**
 * Whether descriptor `fd` is a pipe, a file, a socket or /dev/null, written
 * the way Node's own stream for it writes on Linux: at once, with write(2).
 * Anything else (a terminal) gets Node's stream. /dev/null is the one
 * character device known not to be a terminal without loading node:tty.
 */
function writesDirectly(fd: number): boolean {
  try {
    const stat = fstatSync(fd);
    if (stat.isFIFO() || stat.isFile() || stat.isSocket()) return true;
    return stat.isCharacterDevice() && stat.rdev === statSync('/dev/null').rdev;
  } catch {
    return false;
  }
}

/** A reader that goes away (`estate openapi | head`) ends the output, not in a crash. */
function onStdoutError(err: NodeJS.ErrnoException): void {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
}

/**
 * What writes stdout. A pipe or a file is written with write(2), without
 * building process.stdout: its socket and the stream modules cost every
 * start milliseconds, and a command prints once. A descriptor that would
 * block (a non-blocking pipe) hands the rest, in order, to process.stdout.
 */
function stdoutWriter(direct: boolean): (text: string) => void {
  let stream: NodeJS.WriteStream | undefined;
  const toStream = (): NodeJS.WriteStream => {
    if (!stream) stream = process.stdout.on('error', onStdoutError);
    return stream;
  };
  if (!direct) toStream();
  return (text) => {
    if (stream) return void stream.write(text);
    const bytes = Buffer.from(text, 'utf8');
    let written = 0;
    try {
      while (written < bytes.length) written += writeSync(1, bytes, written);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return void toStream().write(bytes.subarray(written));
      onStdoutError(err as NodeJS.ErrnoException);
    }
  };
}

/**
 * Read by bin/estate when the process ends. A V8 code cache of the bundle
 * that is missing or rejected (node run with other flags) is written anew
 * from the functions this run compiled: those of a start-up, unless the
 * command ran until stopped (serve, --follow, --watch), whose functions are
 * not what the next start needs. Such a run leaves the cache to the next
 * short command.
 */
export const codeCache = { worthWriting: true };

async function main(): Promise<void> {
  const stdoutDirect = writesDirectly(1);
  const stdout = stdoutWriter(stdoutDirect);

  // A command that stops gracefully (serve drains, --watch and --follow end
  // with 0) claims the first SIGTERM/SIGINT with io.onStop(); for any other
  // command the first signal ends the process at once (130/143), as a second
  // one always does, after the cleanups registered with atExit.
  const cleanups = new Set<() => void>();
  let claimed = false;
  let signalled = false;
  let stop: (sig: string) => void = () => {};
  const stopSignal = new Promise<string>((resolve) => (stop = resolve));
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.on(sig, () => {
      if (claimed && !signalled) {
        signalled = true;
        return stop(sig);
      }
      for (const cleanup of cleanups) cleanup();
      process.exit(sig === 'SIGINT' ? 130 : 143);
    });
  }

  const { runCli } = await import('./run-cli.ts');
  process.exitCode = await runCli(process.argv.slice(2), {
    env: process.env,
    stdout,
    stderr: (text) => process.stderr.write(text),
    isTTY: !stdoutDirect && Boolean(process.stdout.isTTY),
    stderrIsTTY: !writesDirectly(2) && Boolean(process.stderr.isTTY),
    columns: stdoutDirect ? undefined : process.stdout.columns,
    onStop: () => {
      claimed = true;
      codeCache.worthWriting = false;
      return stopSignal;
    },
    atExit: (cleanup) => {
      cleanups.add(cleanup);
      return () => void cleanups.delete(cleanup);
    },
  });
  // Signal listeners keep nothing alive; stdout is flushed before the process ends.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
}

void main();
