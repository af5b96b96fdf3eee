// One error type for the whole program. A throw site names a code; what that
// code means to HTTP (status) and to the shell (exit code) lives only here.

export const ERROR_CODES = {
  validation: { status: 422, exit: 2 },
  usage: { status: 400, exit: 2 },
  forbidden: { status: 403, exit: 4 },
  not_found: { status: 404, exit: 3 },
  method_not_allowed: { status: 405, exit: 2 },
  not_acceptable: { status: 406, exit: 2 },
  conflict: { status: 409, exit: 5 },
  payload_too_large: { status: 413, exit: 2 },
  unsupported_media_type: { status: 415, exit: 2 },
  rate_limited: { status: 429, exit: 1 },
  internal: { status: 500, exit: 1 },
  bad_gateway: { status: 502, exit: 1 },
  unavailable: { status: 503, exit: 1 },
  gateway_timeout: { status: 504, exit: 1 },
  insufficient_storage: { status: 507, exit: 1 },
  io: { status: 500, exit: 1 },
} as const satisfies Record<string, { status: number; exit: number }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** One entry of a 422 body, shaped like pydantic v2's ValidationError. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class EstateError extends Error {
  readonly code: ErrorCode;
  /** For `validation`: the issues that make up the 422 `detail` array. */
  readonly issues: ValidationIssue[] | undefined;
  /** Extra response headers (`Allow` on 405, `Retry-After` on 429). */
  readonly headers: Record<string, string> | undefined;
  /** A refusal to protect the server (a bound of it reached: load shed), not a failure of what was asked; /metrics counts it as `overloaded`. */
  readonly overload: boolean;

  constructor(
    code: ErrorCode,
    message: string,
    options: { cause?: unknown; issues?: ValidationIssue[]; headers?: Record<string, string>; overload?: boolean } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EstateError';
    this.code = code;
    this.issues = options.issues;
    this.headers = options.headers;
    this.overload = options.overload ?? false;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get exitCode(): number {
    return ERROR_CODES[this.code].exit;
  }
}

export function validationError(issues: ValidationIssue[]): EstateError {
  const first = issues[0];
  const message = first ? `${describeLoc(first.loc)}: ${first.msg}` : 'invalid input';
  return new EstateError('validation', message, { issues });
}

/** `["query","limit"]` → `query.limit`; used in one-line CLI messages. */
export function describeLoc(loc: readonly (string | number)[]): string {
  return loc.join('.');
}

/** The syscalls of file system errors (EACCES/EPERM from these are the data dir's, not a program's or a signal's). */
const FS_SYSCALL = /^(open|read|write|writev|rename|unlink|mkdir|mkdtemp|rmdir|rm|link|symlink|fsync|fdatasync|ftruncate|chmod|fchmod|chown|copyfile|utime|futime|scandir|opendir|stat|lstat|fstat|access|readlink|realpath)$/;

/**
 * Any thrown value as an EstateError; unknown errors become `internal` with
 * their cause kept. What the storage refuses is the operator's to fix, not
 * our bug, and the message names the errno, never a path:
 * - a full disk or exhausted quota (ENOSPC, EDQUOT) is `insufficient_storage`
 *   (507, exit 1): nothing was stored, and the caller may retry later;
 * - a read-only file system (EROFS) is `unavailable` (503, exit 1): nothing was stored;
 * - permission denied by the file system (EACCES, EPERM from a file system
 *   call, not from starting a program or signalling one) is `unavailable` (503, exit 1).
 */
export function toEstateError(err: unknown): EstateError {
  if (err instanceof EstateError) return err;
  const { code, syscall } = (err ?? {}) as NodeJS.ErrnoException;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new EstateError('insufficient_storage', `no space left to write in the data dir (${code}): nothing was stored; free some space and retry`, { cause: err });
  }
  if (code === 'EROFS') {
    return new EstateError('unavailable', 'the data dir is on a read-only file system (EROFS): nothing was stored; make it writable and retry', { cause: err });
  }
  if ((code === 'EACCES' || code === 'EPERM') && typeof syscall === 'string' && FS_SYSCALL.test(syscall)) {
    return new EstateError('unavailable', `the file system denied access in the data dir (${code}): nothing was changed; check the owner and mode of the data dir and its files`, { cause: err });
  }
  return new EstateError('internal', 'Internal Server Error', { cause: err });
}

/**
 * The JSON error body, the same on every route:
 * - 422: `{"detail": [{"loc": [...], "msg": "...", "type": "..."}]}` (HTTPValidationError);
 * - every other status: `{"detail": "<one human-readable sentence>"}`.
 * Internal errors never expose their cause: the body says only "Internal Server Error".
 */
export function errorBody(err: EstateError): { detail: string | ValidationIssue[] } {
  if (err.code === 'validation' && err.issues) return { detail: err.issues };
  if (err.code === 'internal' || err.code === 'io') return { detail: 'Internal Server Error' };
  return { detail: err.message };
}
