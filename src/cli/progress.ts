import type { CliIO } from './io.ts';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const INTERVAL_MS = 80;
/** Carriage return, then erase the line. */
const CLEAR = '\r\x1b[2K';

/**
 * Shows a spinner with `label` on stderr while a command waits for a remote
 * source, only when stderr is a terminal (never in pipes, files or tests).
 * Returns the function that stops it and erases the line; calling it twice
 * is harmless.
 *
 * @example
 *   const stop = startProgress(io, 'checking providers…');
 *   try { await check(); } finally { stop(); }
 */
export function startProgress(io: Pick<CliIO, 'stderr' | 'stderrIsTTY'>, label: string | undefined, intervalMs = INTERVAL_MS): () => void {
  if (!label || !io.stderrIsTTY) return () => {};
  let frame = 0;
  const draw = () => io.stderr(`${CLEAR}${FRAMES[frame++ % FRAMES.length]} ${label}`);
  draw();
  const timer = setInterval(draw, intervalMs);
  timer.unref();
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    io.stderr(CLEAR);
  };
}
