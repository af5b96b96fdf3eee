import type { CliIO } from '../io.ts';

/** The terminal's width: $COLUMNS when set (as ls), else the terminal's own, else 80. */
export function terminalWidth(io: Pick<CliIO, 'env' | 'columns'>): number {
  const fromEnv = Number.parseInt(io.env.COLUMNS ?? '', 10);
  if (fromEnv > 0) return fromEnv;
  return io.columns && io.columns > 0 ? io.columns : 80;
}
