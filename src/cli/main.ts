// The entry: the only place that touches process.argv, the real streams and
// process exit status.
async function main(): Promise<void> {
  // A reader that goes away (`estate openapi | head`) ends the output, not in a crash.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });

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
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    isTTY: Boolean(process.stdout.isTTY),
    stderrIsTTY: Boolean(process.stderr.isTTY),
    columns: process.stdout.columns,
    onStop: () => {
      claimed = true;
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
