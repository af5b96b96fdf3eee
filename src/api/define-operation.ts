import type { z } from 'zod';
import type { EstateContext, Principal, Scope } from './context.ts';

export type Method = 'GET' | 'POST' | 'DELETE';

/**
 * - `public`: no credential needed (one that is sent is ignored);
 * - `protected`: a valid credential is needed, else 403;
 * - `user`: a credential is optional; when sent it must be valid and it decides the user.
 */
export type Access = 'public' | 'protected' | 'user';

type AnyObject = z.ZodObject;
type EmptyObject = z.ZodObject<Record<string, never>>;

export interface OperationInput<P extends AnyObject, Q extends AnyObject, B extends AnyObject> {
  path: z.output<P>;
  query: z.output<Q>;
  body: z.output<B>;
}

export interface Call<P extends AnyObject, Q extends AnyObject, B extends AnyObject> {
  ctx: EstateContext;
  input: OperationInput<P, Q, B>;
  principal: Principal | undefined;
}

/** A handler's answer when the status is not the operation's usual one (201 vs 200 replay). */
export interface Reply<T> {
  readonly reply: true;
  status: number;
  body: T;
}

export function reply<T>(status: number, body: T): Reply<T> {
  return { reply: true, status, body };
}

export interface CliSpec {
  /** Words after `estate`, e.g. `trends latest`. */
  command: string;
  /**
   * Path parameters taken as positional arguments, in order. An entry that
   * joins parameters with `/` (`owner/repo`) is one argument split on `/`
   * into those parameters (`estate forge issues estate/infra`).
   */
  args?: string[];
  /** A progress line shown on stderr (on a terminal only) while the command waits, for operations that ask remote sources. */
  progress?: string;
  /** Columns for the table view of `items` (default: the keys of the first rows). */
  columns?: string[];
  /**
   * The command takes `--watch` (a live view): these are the files, relative
   * to the data dir, whose changes can change the answer (watched locally;
   * with --url the route is polled with If-None-Match).
   */
  watch?: readonly string[];
  /** Exit status by answer, for an operation that answers one JSON string (`pulse status`); an answer not listed exits 0. */
  exitCodes?: Readonly<Record<string, number>>;
  /**
   * The exit status of every error of the command (a bad option, an
   * unreachable server, a missing data dir) in place of the usual codes, its
   * message kept to one line: a monitoring plugin exits 3 UNKNOWN when it
   * cannot check (`pulse status`).
   */
  errorExitCode?: number;
  /** One or more example invocations, shown in --help and the man page. */
  examples: string[];
}

export interface OperationSpec<P extends AnyObject, Q extends AnyObject, B extends AnyObject, O extends z.ZodType> {
  id: string;
  method: Method;
  /** OpenAPI form: `/state/{file_name}`. */
  path: string;
  access: Access;
  /** The scope a credential needs (default: `read` for GET, `write` for POST and DELETE). */
  scope?: Scope;
  summary: string;
  description?: string;
  tag: string;
  input?: { path?: P; query?: Q; body?: B };
  output: O;
  /** The usual success status (default 200). */
  status?: number;
  /** Error statuses this route can answer besides 403/422 (for the OpenAPI document). */
  errors?: number[];
  /** Other success statuses the handler answers with `reply()`, with the same body schema (200 on an identical replay of a 201 route). */
  replies?: number[];
  /** A 201 answer's `Location`: where the created resource is read back (a path of this API). */
  location?: (output: z.output<O>) => string;
  /** `text/html` routes return a string. */
  produces?: 'application/json' | 'text/html';
  /**
   * Asks external sources or gathers many: the server runs few at once
   * (serve.expensive_routes) and refuses the excess with 503 (429 past a
   * client's share). A function of the raw query says so per request (a
   * large page, but not a small one).
   */
  expensive?: boolean | ((query: Readonly<Record<string, string | undefined>>) => boolean);
  /** Counts against the client's request rate (default true); false for probes that must answer whatever the load. */
  rateLimited?: boolean;
  /** The largest request body the route reads, in bytes (413 past it; default 1 MiB, read-body.ts). */
  maxBodyBytes?: number;
  /**
   * Top-level output fields that change on every call without the data
   * changing (`generated_at`, `uptime_s`, the live `runtime`): left out of the
   * answer's ETag, so a client polling unchanged data gets 304.
   */
  volatile?: readonly (keyof z.output<O> & string)[];
  /**
   * How the route answers 503 (for the OpenAPI document): `never` (it reads
   * neither the data dir nor a store), `retry-after` (always with
   * `Retry-After`); by default it may, when what it reads is unavailable.
   */
  unavailable?: 'never' | 'retry-after';
  handler: (call: Call<P, Q, B>) => Promise<z.output<O> | Reply<z.output<O>>> | z.output<O> | Reply<z.output<O>>;
  cli: CliSpec | false;
}

/** The erased form every consumer (router, CLI, OpenAPI) walks. */
export interface Operation {
  id: string;
  method: Method;
  path: string;
  access: Access;
  scope: Scope;
  summary: string;
  description: string | undefined;
  tag: string;
  input: { path: AnyObject | undefined; query: AnyObject | undefined; body: AnyObject | undefined };
  output: z.ZodType;
  status: number;
  errors: number[];
  replies: number[];
  location: ((output: unknown) => string) | undefined;
  produces: 'application/json' | 'text/html';
  expensive: boolean | ((query: Readonly<Record<string, string | undefined>>) => boolean);
  rateLimited: boolean;
  maxBodyBytes: number | undefined;
  volatile: readonly string[];
  unavailable: 'never' | 'retry-after' | 'may';
  handler: (call: Call<AnyObject, AnyObject, AnyObject>) => Promise<unknown> | unknown;
  cli: CliSpec | false;
}

/**
 * Declares one operation of the API: route, access, schemas, handler and CLI
 * name, all in one object that the router, the CLI and the OpenAPI document read.
 *
 * @example
 *   export const trendsLatest = defineOperation({
 *     id: 'trends.latest', method: 'GET', path: '/trends/latest', access: 'protected',
 *     summary: 'The most recent trend point', tag: 'trends', output: trendPoint,
 *     handler: ({ ctx }) => latestTrend(ctx.dataDir), cli: { command: 'trends latest', examples: ['estate trends latest'] },
 *   });
 */
export function defineOperation<
  O extends z.ZodType,
  P extends AnyObject = EmptyObject,
  Q extends AnyObject = EmptyObject,
  B extends AnyObject = EmptyObject,
>(spec: OperationSpec<P, Q, B, O>): Operation {
  return {
    id: spec.id,
    method: spec.method,
    path: spec.path,
    access: spec.access,
    scope: spec.scope ?? (spec.method === 'GET' ? 'read' : 'write'),
    summary: spec.summary,
    description: spec.description,
    tag: spec.tag,
    input: { path: spec.input?.path, query: spec.input?.query, body: spec.input?.body },
    output: spec.output,
    status: spec.status ?? 200,
    // Load shedding is part of the contract: 503 when too many expensive calls wait, 429 over the rate limit.
    errors: [...new Set([...(spec.errors ?? []), ...(spec.expensive ? [503] : []), ...((spec.rateLimited ?? true) ? [429] : [])])],
    replies: spec.replies ?? [],
    location: spec.location as Operation['location'],
    produces: spec.produces ?? 'application/json',
    expensive: spec.expensive ?? false,
    rateLimited: spec.rateLimited ?? true,
    maxBodyBytes: spec.maxBodyBytes,
    volatile: spec.volatile ?? [],
    unavailable: spec.unavailable ?? 'may',
    handler: spec.handler as Operation['handler'],
    cli: spec.cli,
  };
}

/**
 * Whether the route answers 403 to a call without a credential: `protected`
 * routes, and `user` routes whose scope is not `read` (starting or deleting a
 * training run). The router and the OpenAPI document's `security` both ask this.
 */
export function needsCredential(op: Pick<Operation, 'access' | 'scope'>): boolean {
  return op.access === 'protected' || (op.access === 'user' && op.scope !== 'read');
}

export function isReply(value: unknown): value is Reply<unknown> {
  return typeof value === 'object' && value !== null && (value as { reply?: unknown }).reply === true && 'status' in value;
}

/** The names inside `{…}` of an OpenAPI path, in order. */
export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1] as string);
}
