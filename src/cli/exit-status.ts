import type { Command } from 'commander';
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
 * else ''. Errors keep their usual codes (README, "Exit status") unless the
 * operation has `cli.errorExitCode`.
 */
export function exitCodesHelp(op: Operation): string {
  const codes = op.cli ? op.cli.exitCodes : undefined;
  if (!codes) return '';
  const list = Object.entries(codes)
    .sort(([, a], [, b]) => a - b)
    .map(([answer, code]) => `${code} ${answer}`)
    .join(', ');
  const onError = op.cli ? op.cli.errorExitCode : undefined;
  const errors =
    onError === undefined
      ? 'When the answer cannot be had, the usual codes: 1 failure, 2 usage, 4 credential.'
      : `When the answer cannot be had (a bad option, an unreachable server, a refused\ncredential, a missing data dir): ${onError} ${Object.keys(codes).find((k) => codes[k] === onError) ?? 'error'}, with one line on stderr.`;
  return `\nExit status: ${list}\n(as a Nagios plugin), whatever the output format.\n${errors}`;
}

const errorExitCodes = new WeakMap<Command, number>();

/** Gives every error of `cmd` this exit status (an operation's `cli.errorExitCode`). */
export function setErrorExitCode(cmd: Command, code: number): void {
  errorExitCodes.set(cmd, code);
}

/** The exit status every error of `cmd` has, if it has one. */
export function errorExitCode(cmd: Command): number | undefined {
  return errorExitCodes.get(cmd);
}
