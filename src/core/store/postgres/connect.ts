import { readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { JSONValue, Sql, TransactionSql } from 'postgres';
import { EstateError } from '../../../errors.ts';

// Connections to the PostgreSQL store: the `postgres` driver (postgres.js,
// loaded only here, only when a postgres:// store is used), bounded in time
// at every step so a server that is down or stuck is a 503, never a hang.

export type { JSONValue, Sql, TransactionSql };

/** How long estate waits for a connection, a statement, and an operation as a whole. */
export const STORE_TIMEOUTS = {
  connectS: 5,
  statementMs: 10_000,
  /** A session left inside a transaction this long (a writer stopped mid-write) is ended by the server, releasing its locks. */
  idleInTransactionMs: 15_000,
  /** Client-side bound of one store call (a server that accepts and then never answers). */
  operationMs: 15_000,
};

/** Seconds a client is told to wait (Retry-After) when the store is unavailable. */
export const STORE_RETRY_AFTER_S = 5;

interface Target {
  host: string;
  port: string;
  database: string;
  user: string;
}

/** Where `url` connects, with libpq's environment defaults, for matching a password file line. */
function target(url: string, env: NodeJS.ProcessEnv): Target {
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    u = undefined;
  }
  const user = decodeSafe(u?.username ?? '') || env.PGUSER || os.userInfo().username;
  return {
    host: (u?.hostname || env.PGHOST || 'localhost').replace(/^\[|\]$/g, ''),
    port: u?.port || env.PGPORT || '5432',
    database: decodeSafe((u?.pathname ?? '').slice(1)) || env.PGDATABASE || user,
    user,
  };
}

/** The URL's own password, if it has one. */
function urlPassword(url: string): string | undefined {
  try {
    const password = new URL(url).password;
    return password === '' ? undefined : decodeSafe(password);
  } catch {
    return undefined;
  }
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * The password for `url`, as libpq finds it: the URL's, else PGPASSWORD, else
 * the first matching line of the password file (PGPASSFILE, else ~/.pgpass;
 * ignored, as libpq does, when others may read it).
 */
export function findPassword(url: string, env: NodeJS.ProcessEnv): string | undefined {
  const own = urlPassword(url);
  if (own !== undefined) return own;
  if (env.PGPASSWORD) return env.PGPASSWORD;
  const file = env.PGPASSFILE || path.join(env.HOME || os.homedir(), '.pgpass');
  let text: string;
  try {
    if ((statSync(file).mode & 0o077) !== 0) return undefined;
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const t = target(url, env);
  const wanted = [t.host, t.port, t.database, t.user];
  for (const line of text.split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const fields = splitPassLine(line.replace(/\r$/, ''));
    if (fields.length < 5) continue;
    const matches = wanted.every((w, i) => fields[i] === '*' || fields[i] === w || (i === 0 && fields[i] === 'localhost' && w.startsWith('/')));
    if (matches) return fields.slice(4).join(':');
  }
  return undefined;
}

/** `host:port:db:user:password` with `\:` and `\\` escapes. */
function splitPassLine(line: string): string[] {
  const fields: string[] = [];
  let current = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === '\\' && i + 1 < line.length) current += line[++i];
    else if (c === ':' && fields.length < 4) {
      fields.push(current);
      current = '';
    } else current += c;
  }
  fields.push(current);
  return fields;
}

export type Driver = typeof import('postgres');

/** The driver, imported at the first use of a PostgreSQL store (CLI start-up never loads it). */
export async function loadDriver(): Promise<Driver> {
  const driver = (await import('postgres')).default;
  survivesLostTypeQuery();
  return driver;
}

let guarded = false;

/**
 * Keeps the process alive when a new connection is lost while the driver
 * asks for the server's array types (its `fetch_types` query, the first
 * statement of every connection). postgres 3.4.9 drops that query's promise
 * (porsager/postgres#1192, #1223), so a server restart, a terminated backend
 * or a pool ended at that moment is an unhandled rejection, which ends a
 * Node process. The query that opened the connection fails on its own (a
 * 503 at most), so only that rejection is let go. Any other is thrown again,
 * as Node would without a handler, unless something else listens for them.
 */
function survivesLostTypeQuery(): void {
  if (guarded) return;
  guarded = true;
  process.on('unhandledRejection', (reason) => {
    if (isTypeQueryFailure(reason)) return;
    if (process.listenerCount('unhandledRejection') === 1) throw reason;
  });
}

/** Whether `reason` is the failure of the driver's own array-types query (it carries the query's text). */
export function isTypeQueryFailure(reason: unknown): boolean {
  const query = (reason as { query?: unknown } | null | undefined)?.query;
  return typeof query === 'string' && query.includes('pg_catalog.pg_type') && query.includes('typarray');
}

export interface PoolOptions {
  /** Connections at most (default 10). */
  max?: number;
  /** For a LISTEN connection: notifications, and the loss of the connection. */
  onNotify?: (channel: string, payload: string) => void;
  onClose?: () => void;
}

/**
 * A connection pool to `url` with estate's timeouts and the password libpq
 * would use (findPassword). Connects lazily: the first query is where an
 * unreachable server or a bad password shows.
 */
export function openPool(driver: Driver, url: string, env: NodeJS.ProcessEnv, options: PoolOptions = {}): Sql {
  const password = findPassword(url, env);
  const listening = options.onNotify !== undefined;
  return driver(url, {
    ...(password === undefined ? {} : { pass: password }),
    max: options.max ?? 10,
    connect_timeout: STORE_TIMEOUTS.connectS,
    // Seconds before a lost connection connects again. The driver's own delay
    // grows to 20 s, so a request would wait out the operation deadline during
    // an outage (a late 503) and a replica would take that long to recover.
    backoff: reconnectDelayS,
    // A LISTEN connection stays open; others close after a minute idle.
    idle_timeout: listening ? 0 : 60,
    ...(listening ? { max_lifetime: null } : {}),
    onnotice: () => {},
    ...(options.onNotify ? { onnotify: options.onNotify } : {}),
    ...(options.onClose ? { onclose: options.onClose } : {}),
    // LISTEN and UNLISTEN need no array types: a listening connection skips that query.
    ...(listening ? { fetch_types: false } : {}),
    connection: {
      application_name: 'estate',
      statement_timeout: STORE_TIMEOUTS.statementMs,
      idle_in_transaction_session_timeout: STORE_TIMEOUTS.idleInTransactionMs,
    },
  });
}

/** Seconds before the next connection attempt after `attempt` failed ones in a row: 0.1, 0.2… at most 1. */
function reconnectDelayS(attempt: number): number {
  return Math.min(0.1 * attempt, 1);
}

/** Failures that mean a transaction's connection is gone (the socket's errors and the driver's own). */
const LOST_CONNECTION_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'CONNECTION_CLOSED', 'CONNECTION_DESTROYED']);

/**
 * `sql.begin(work)`, safe when the connection is lost inside the transaction.
 * The driver (postgres 3.4.9; porsager/postgres#1208, #1215) then writes its
 * ROLLBACK to the closed connection: an uncaught TypeError from a timer,
 * which ends the process, or bytes in the middle of the connection's next
 * start-up, after which it never connects again. So `work` that failed that
 * way never settles: `begin` itself rejects when the connection closes (it
 * waits on both), nothing more is written, and the server rolls back the
 * session that ended.
 */
export function transaction<T>(sql: Sql, work: (tx: TransactionSql) => Promise<T>): Promise<T> {
  return sql.begin(async (tx) => {
    try {
      return await work(tx);
    } catch (err) {
      const code = (err as { code?: unknown } | undefined)?.code;
      if (typeof code === 'string' && LOST_CONNECTION_CODES.has(code)) return new Promise<never>(() => {});
      throw err;
    }
  }) as Promise<T>;
}

/** Codes of the driver's and the socket's connection failures. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'SASL_SIGNATURE_MISMATCH']);

/** Short words for a failure, for messages and /readyz: never a password. */
export function failureCode(err: unknown): string {
  if (err instanceof EstateError) return err.cause !== undefined ? failureCode(err.cause) : err.code === 'unavailable' ? 'timeout' : err.code;
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') return 'failed';
  if (code === 'CONNECT_TIMEOUT' || code === 'ETIMEDOUT') return 'connect timeout';
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (CONNECTION_CODES.has(code)) return 'connection lost';
  if (code === '57014') return 'statement timeout';
  if (code === '28P01' || code === '28000') return 'authentication failed';
  if (code === '3D000') return 'database does not exist';
  if (code === '42P01') return 'schema missing';
  if (code === '42501') return 'permission denied';
  if (/^(57P0[1-3]|08...)$/.test(code)) return 'server shutting down or unreachable';
  if (/^53...$/.test(code)) return 'server out of resources';
  return /^[0-9A-Z]{5}$/.test(code) ? `error ${code}` : 'failed';
}

/**
 * Whether `err` means the store cannot be used now (not our bug): the server
 * is unreachable, shutting down, out of resources, refuses our credentials or
 * privileges, lacks the schema, or a statement ran out of time.
 */
export function isStoreFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') return false;
  return CONNECTION_CODES.has(code) || /^(08|53|57|28|3D|40)/.test(code) || code === '42P01' || code === '42501' || code === '25P03';
}

/** A store failure as EstateError 'unavailable' (503, Retry-After) naming the store; anything else unchanged. */
export function storeError(err: unknown, store: string): unknown {
  if (err instanceof EstateError || !isStoreFailure(err)) return err;
  const what = failureCode(err);
  const hint = what === 'schema missing' ? ': run estate migrate' : '';
  return new EstateError('unavailable', `the store ${store} is unavailable (${what})${hint}; try again later`, {
    cause: err,
    headers: { 'Retry-After': String(STORE_RETRY_AFTER_S) },
  });
}

/**
 * A session's fatal error (57P01 administrator shutdown, 57P02 crash) as the
 * driver reports it on the first statement of the connection's next session
 * (postgres 3.4.9; porsager/postgres#1223): a stale error for a statement it
 * never sent. A statement that was sent when its session ended fails with
 * CONNECTION_CLOSED or ECONNRESET instead.
 */
const REPLAYED_FATAL_CODES = new Set(['57P01', '57P02']);

/** Runs `work`, again (twice at most) when it failed with a replayed fatal error, which leaves the connection usable. */
async function untilSent<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      const code = (err as { code?: unknown } | undefined)?.code;
      if (attempt >= 3 || typeof code !== 'string' || !REPLAYED_FATAL_CODES.has(code)) throw err;
    }
  }
}

/** Runs `work` (tried again after a replayed fatal error), bounded by STORE_TIMEOUTS.operationMs; failures of the store become `unavailable`. */
export async function withinDeadline<T>(store: string, work: () => Promise<T>, ms = STORE_TIMEOUTS.operationMs): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new EstateError('unavailable', `the store ${store} did not answer within ${Math.round(ms / 1000)} s; try again later`, {
            headers: { 'Retry-After': String(STORE_RETRY_AFTER_S) },
          }),
        ),
      ms,
    );
  });
  try {
    return await Promise.race([untilSent(work), deadline]);
  } catch (err) {
    throw storeError(err, store);
  } finally {
    clearTimeout(timer);
  }
}
