import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EstateContext, Principal } from '../api/context.ts';
import { prefersHtml } from './prefers-html.ts';
import { needsCredential, type Operation } from '../api/define-operation.ts';
import { type RawInput, repeatedNames } from '../api/parse-input.ts';
import { runOperation } from '../api/run-operation.ts';
import type { Authenticator } from '../core/keys/authenticator.ts';
import { keyIdOf } from '../core/keys/key-store.ts';
import { grants } from '../core/keys/scopes.ts';
import { EstateError, errorBody, toEstateError } from '../errors.ts';
import type { ConcurrencyLimit } from '../core/limit-concurrency.ts';
import { type AccessLine, logAccess } from './access-log.ts';
import { applyCors } from './cors.ts';
import { type Carrier, type PresentedCredential, presentedCredential } from './credentials.ts';
import { clientKey, type RateLimiter } from './rate-limit.ts';
import { readJson } from './read-body.ts';
import { redactPaths } from './redact-paths.ts';
import { requestId } from './request-id.ts';
import { Router } from './router.ts';
import { SECURITY_HEADERS } from './security-headers.ts';
import { sendError, sendJson, sendText } from './send.ts';
import type { UnsentBudget } from './unsent-budget.ts';

/** A route that is not an API operation (docs assets, the OpenAPI document, streams). */
export interface RawRoute {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** The route charges the rate limit itself, to the client its credential names (/mcp); by default the handler charges the client's address. */
  chargesItself?: boolean;
  handle: (req: IncomingMessage, res: ServerResponse, params: Record<string, string>) => void | Promise<void>;
}

export interface HandlerOptions {
  authenticate: Authenticator;
  rawRoutes?: readonly RawRoute[];
  /** Called with every error that is ours (500), with its cause. */
  onInternalError?: (err: EstateError, req: IncomingMessage) => void;
  /** Called when a request presents an invalid credential; never given the secret. */
  onAuthFailed?: (failure: AuthFailure) => void;
  /** Called once per request, when its response is done or its connection closes. */
  onAccess?: (line: AccessLine) => void;
  /** Origins whose browser pages may call the API (CORS); none when empty or absent. */
  corsOrigins?: ReadonlySet<string>;
  /** Charges every request but those of operations with `rateLimited: false`. */
  rateLimit?: RateLimiter;
  /** Runs the operations marked `expensive`. */
  expensive?: ConcurrencyLimit;
  /** Bounds the bytes of operation answers not yet taken by their clients (503 past it). */
  unsent?: UnsentBudget;
  /**
   * Pages that stand for an operation's path in a browser: a GET of that path
   * whose Accept prefers HTML is redirected (302) to the page, relative to
   * the path; its JSON answer says `Vary: Accept`. `{ '/': 'dashboard' }`.
   */
  htmlPages?: Readonly<Record<string, string>>;
  /**
   * Told of each request once it is routed: its route's template
   * (`/state/{file_name}`, never the path sent; `(none)` when no route
   * matched), to follow it to its end (the server's metrics).
   */
  observe?: (req: IncomingMessage, res: ServerResponse, route: string) => void;
}

/** The route of a request no route matched, for `observe`. */
export const NO_ROUTE = '(none)';

export interface AuthFailure {
  carrier: Carrier;
  /** The key id, when the secret has the shape of an API key (`est_<id>_…`). */
  keyId: string | undefined;
  /** The path, without the query (which may hold the secret). */
  path: string;
}

type Entry = { kind: 'op'; op: Operation } | { kind: 'raw'; route: RawRoute };

/**
 * The whole HTTP API as a `(req, res)` function, with no socket of its own.
 * One pipeline per request: match → access → parse input → run → check output → send.
 */
export function createHandler(ops: readonly Operation[], ctx: EstateContext, options: HandlerOptions) {
  const router = new Router<Entry>();
  for (const route of options.rawRoutes ?? []) router.add(route.method, route.path, { kind: 'raw', route });
  for (const op of ops) router.add(op.method, op.path, { kind: 'op', op });

  const charge = (req: IncomingMessage, client: string) => options.rateLimit?.charge(req, client);

  return async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const id = requestId(req);
    const note = options.onAccess ? logAccess(req, res, id, options.onAccess) : undefined;
    // Whether the security headers and the request id are set on `res` already (raw routes, CORS);
    // else an operation's answer sends them with the rest of its headers, in one writeHead.
    let preset = false;
    try {
      if (options.corsOrigins !== undefined && options.corsOrigins.size > 0) {
        presetHeaders(res, id);
        preset = true;
        if (applyCors(req, res, options.corsOrigins)) return;
      }
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const pathname = q === -1 ? url : url.slice(0, q);
      const match = router.match(req.method ?? 'GET', pathname);
      options.observe?.(req, res, match.kind === 'found' ? (match.value.kind === 'op' ? match.value.op.path : match.value.route.path) : NO_ROUTE);
      if (match.kind === 'not_found') {
        charge(req, clientKey(req, undefined));
        throw new EstateError('not_found', 'Not Found');
      }
      if (match.kind === 'wrong_method') {
        charge(req, clientKey(req, undefined));
        throw new EstateError('method_not_allowed', 'Method Not Allowed', { headers: { Allow: match.allowed.join(', ') } });
      }
      const entry = match.value;
      if (entry.kind === 'raw') {
        if (!preset) presetHeaders(res, id);
        preset = true;
        if (!entry.route.chargesItself) charge(req, clientKey(req, undefined));
        return await entry.route.handle(req, res, match.params);
      }

      const { op } = entry;
      const page = options.htmlPages?.[op.path];
      if (page !== undefined && (req.method === 'GET' || req.method === 'HEAD')) {
        res.appendHeader('Vary', 'Accept');
        if (prefersHtml(req.headers.accept)) {
          if (!preset) presetHeaders(res, id);
          charge(req, clientKey(req, undefined));
          res.writeHead(302, { Location: page, 'Cache-Control': 'no-cache', 'Content-Length': '0' });
          res.end();
          return;
        }
      }
      const query = q === -1 ? NO_QUERY : new URLSearchParams(url.slice(q + 1));
      let principal: Principal | undefined;
      // Who the request comes from, for every per-client bound: its valid credential, else its address.
      let client: string;
      // The bucket charged for the request, charged again for its answer's weight.
      let bucket: string | undefined;
      if (op.access === 'public') {
        client = clientKey(req, undefined);
        if (op.rateLimited) bucket = charge(req, client);
      } else {
        try {
          principal = await authorize(op, options, presentedCredential(req, query), pathname);
        } finally {
          // A refused credential costs its client's address: guessing keys is rate-limited too.
          client = clientKey(req, principal);
          if (op.rateLimited) bucket = charge(req, client);
        }
      }
      if (note && principal) note.user = principal.userId;
      const sent = op.input.body ? await readJson(req, op.maxBodyBytes) : undefined;
      const raw: RawInput = {
        path: match.params,
        // Only an operation that takes a query reads one.
        query: op.input.query ? Object.fromEntries(query) : {},
        repeated: op.input.query ? repeatedNames(query) : [],
        body: sent?.body,
        ...(sent ? { bodyText: sent.text } : {}),
      };
      const expensive = op.expensive === true || (op.expensive !== false && op.expensive(raw.query ?? {}));
      const result =
        expensive && options.expensive ? await options.expensive.run(() => runOperation(op, ctx, raw, principal), client) : await runOperation(op, ctx, raw, principal);
      const sendId = preset ? undefined : id;
      if (op.produces === 'text/html') sendText(req, res, result.status, 'text/html; charset=utf-8', String(result.body), undefined, sendId);
      else {
        const location = result.status === 201 && op.location ? { Location: op.location(result.body) } : undefined;
        const sent = sendJson(req, res, result.status, result.body, location, options.unsent, op.volatile, sendId, client);
        if (bucket !== undefined) options.rateLimit?.chargeAnswer(bucket, sent);
      }
    } catch (err) {
      const error = toEstateError(err);
      if (error.status >= 500) options.onInternalError?.(error, req);
      const body = errorBody(error);
      if (typeof body.detail === 'string') body.detail = redactPaths(body.detail, ctx.dataDir);
      sendError(req, res, error, body, preset ? undefined : id);
    }
  };
}

/** The query of a request without one; never changed. */
const NO_QUERY = new URLSearchParams();

/** Sets the security headers and the request id on `res` now, for a raw route (or CORS) that writes its own headers. */
function presetHeaders(res: ServerResponse, id: string): void {
  for (const name in SECURITY_HEADERS) res.setHeader(name, SECURITY_HEADERS[name] as string);
  res.setHeader('X-Request-Id', id);
}

/**
 * Checks the credential against the operation's access and scope; 403 before
 * any input is read. On a `user` route that reads, a missing credential means
 * no user; a write needs a credential with the `write` scope everywhere (an
 * `ingest` route: `ingest` or `write`), and
 * an invalid credential is refused everywhere but on `public` routes.
 */
/** Decides who calls a route (an operation, or a raw route that names its access and scope): 403 when its credential cannot. */
export async function authorize(
  op: Pick<Operation, 'access' | 'scope' | 'method' | 'path'>,
  options: Pick<HandlerOptions, 'authenticate' | 'onAuthFailed'>,
  credential: PresentedCredential | undefined,
  path: string,
): Promise<Principal | undefined> {
  if (op.access === 'public') return undefined;
  if (credential === undefined) {
    if (!needsCredential(op)) return undefined;
    throw new EstateError('forbidden', 'Not authenticated: send an API key (X-API-Key or ?api_key=) or a bearer token');
  }
  const principal = await options.authenticate(credential.secret);
  if (!principal) {
    options.onAuthFailed?.({ carrier: credential.carrier, keyId: keyIdOf(credential.secret), path });
    throw new EstateError('forbidden', 'Invalid credential');
  }
  if (!grants(principal.scopes, op.scope)) {
    const or = op.scope === 'ingest' ? ' (or "write")' : '';
    throw new EstateError('forbidden', `This credential lacks the "${op.scope}" scope${or} that ${op.method} ${op.path} needs`);
  }
  return principal;
}
