import type { Operation } from '../api/define-operation.ts';

/**
 * Ends a command with this exit status and no message: the answer is
 * printed already and the status is its meaning (`pulse status` exits 1
 * when degraded). runCli returns `code`.
 */
export class ExitStatus extends Error {
  readonly code: number;

  constructor(code: number) {
    super(`exit status ${code}`);
    this.name = 'ExitStatus';
    this.code = code;
  }
}

/** Throws ExitStatus when the operation's `cli.exitCodes` give its answer a non-zero status. */
export function exitForAnswer(op: Operation, body: unknown): void {
  const code = op.cli ? op.cli.exitCodes?.[String(body)] : undefined;
  if (code) throw new ExitStatus(code);
}

/**
 * The `Exit status:` paragraph of `--help` for an operation with `cli.exitCodes`,
 * else ''. Errors keep their usual codes (README, "Exit status").
 */
export function exitCodesHelp(op: Operation): string {
  const codes = op.cli ? op.cli.exitCodes : undefined;
  if (!codes) return '';
  const list = Object.entries(codes)
    .sort(([, a], [, b]) => a - b)
    .map(([answer, code]) => `${code} ${answer}`)
    .join(', ');
  return `\nExit status: ${list} (as a Nagios plugin), whatever the output format.\nWhen the answer cannot be had, the usual codes: 1 failure, 2 usage, 4 credential.\n`;
}
