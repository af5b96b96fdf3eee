import type { IncomingMessage, ServerResponse } from 'node:http';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { EstateContext, Principal } from '../api/context.ts';
import type { Operation } from '../api/define-operation.ts';
import type { RawInput } from '../api/parse-input.ts';
import { runOperation } from '../api/run-operation.ts';
import { EstateError } from '../errors.ts';
import { noteUser } from '../server/access-log.ts';
import { presentedCredential } from '../server/credentials.ts';
import { authorize, type HandlerOptions, type RawRoute } from '../server/handler.ts';
import { clientKey } from '../server/rate-limit.ts';
import { readJson } from '../server/read-body.ts';
import { VERSION } from '../version.ts';
import { AnswerPages } from './answer-pages.ts';
import { createMcpServer } from './mcp-server.ts';
import type { OperationTool } from './operation-tools.ts';

// `/mcp` on `estate serve`: the MCP face over the Streamable HTTP transport,
// stateless (no session: each POST carries one JSON-RPC message or batch and
// gets its answer as JSON), behind the same credentials, scopes, rate limit
// and access log as the rest of the API (it is one of the handler's routes).
// The tools a request sees are those its credential may call over HTTP: a
// read-only key lists and calls only the read tools; without a credential,
// only the public ones; a `user` tool runs as the key's user.

/** What the route asks of a credential (its RouteDoc, `mcp.call` in docs-routes.ts, says the same). */
const ACCESS = { access: 'user', scope: 'read', method: 'POST', path: '/mcp' } as const;

/** The largest JSON-RPC request body /mcp reads (a tool call's arguments are small; a completion's body is under 8 KB). */
const MAX_BODY_BYTES = 256 * 1024;

export function mcpRoutes(
  ctx: EstateContext,
  tools: readonly OperationTool[],
  auth: Pick<HandlerOptions, 'authenticate' | 'onAuthFailed' | 'rateLimit' | 'expensive'>,
  openApi: () => unknown,
): RawRoute[] {
  // Cut answers wait here for next_page: the server's, whichever request asks (a cursor is 96 random bits).
  const pages = new AnswerPages();
  /** What a caller is offered depends only on whether it has a credential and its scopes: worked out once for each. */
  const offers = new Map<string, Promise<{ visible: OperationTool[]; refused: Map<string, string> }>>();
  const offeredTo = (principal: Principal | undefined, credential: ReturnType<typeof presentedCredential>) => {
    const key = principal ? [...principal.scopes].sort().join(' ') : '';
    let offer = offers.get(key);
    if (!offer) {
      offer = offerOf(tools, principal, credential);
      offers.set(key, offer);
    }
    return offer;
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') {
      // Stateless: no stream for server-sent messages, no session to end.
      throw new EstateError('method_not_allowed', 'Method Not Allowed: /mcp is stateless; POST each JSON-RPC message', { headers: { Allow: 'POST' } });
    }
    let client = '';
    let bucket: string | undefined;
    const url = req.url ?? '/mcp';
    const q = url.indexOf('?');
    const credential = presentedCredential(req, new URLSearchParams(q === -1 ? '' : url.slice(q + 1)));
    // As its RouteDoc says (docs-routes.ts, `mcp.call`): a credential is optional, and one that is sent must be valid and read (403 otherwise);
    // none sees the public tools only.
    let principal: Principal | undefined;
    try {
      principal = await authorize(ACCESS, auth, credential, ACCESS.path);
    } finally {
      // As the operations are: to its credential's client, a refused one to its address.
      client = clientKey(req, principal);
      bucket = auth.rateLimit?.charge(req, client);
    }
    if (principal) noteUser(res, principal.userId);
    // An expensive operation (asks external sources, or a large page) waits its turn as over HTTP; the answer's weight is charged too.
    const run = async (op: Operation, raw: RawInput) => {
      const expensive = op.expensive === true || (op.expensive !== false && op.expensive(raw.query ?? {}));
      return expensive && auth.expensive ? auth.expensive.run(() => runOperation(op, ctx, raw, principal), client) : runOperation(op, ctx, raw, principal);
    };
    const { visible, refused } = await offeredTo(principal, credential);
    const server = createMcpServer({ tools: visible, run, version: VERSION, pages, refused, owner: principal?.keyId ?? '', openApi });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const sent = await readJson(req, MAX_BODY_BYTES);
    try {
      await server.connect(transport);
      const request = new Request(`http://estate${url}`, { method: 'POST', headers: webHeaders(req) });
      const answer = await transport.handleRequest(request, { parsedBody: sent?.body });
      // What the transport refuses at the HTTP level (no Accept it can answer, a body that is no JSON-RPC) is said as every route says an error.
      if (answer.status >= 400) throw transportError(answer.status, await answer.text());
      const headers: Record<string, string> = {};
      answer.headers.forEach((value, name) => (headers[name] = value));
      const body = Buffer.from(await answer.arrayBuffer());
      res.writeHead(answer.status, { ...headers, 'Cache-Control': 'no-store', 'Content-Length': String(body.length) });
      res.end(body);
      auth.rateLimit?.chargeAnswer(bucket, body.length);
    } finally {
      await server.close();
    }
  };
  return [
    { method: 'POST', path: '/mcp', handle, chargesItself: true },
    { method: 'GET', path: '/mcp', handle },
    { method: 'DELETE', path: '/mcp', handle },
  ];
}

/** The tools a caller may call over HTTP (authorize, with its principal already found), and those it may not, each with authorize's 403 message. */
async function offerOf(tools: readonly OperationTool[], principal: Principal | undefined, credential: ReturnType<typeof presentedCredential>) {
  const known = { authenticate: async () => principal };
  const refusal = async (op: Operation) => {
    try {
      await authorize(op, known, credential, op.path);
      return undefined;
    } catch (err) {
      return (err as Error).message;
    }
  };
  const refusals = await Promise.all(tools.map((t) => refusal(t.op)));
  const visible = tools.filter((_, i) => refusals[i] === undefined);
  const refused = new Map(tools.flatMap((t, i) => (refusals[i] === undefined ? [] : [[t.definition.name, refusals[i] as string] as const])));
  return { visible, refused };
}

/** A refusal of the transport (its JSON-RPC error) as the API's error: the same status, its message as `detail`. */
function transportError(status: number, text: string): EstateError {
  let message = text;
  try {
    message = String((JSON.parse(text) as { error?: { message?: unknown } }).error?.message ?? text);
  } catch {}
  const code = status === 406 ? 'not_acceptable' : status === 415 ? 'unsupported_media_type' : status === 404 ? 'not_found' : status === 405 ? 'method_not_allowed' : 'usage';
  return new EstateError(code, message || `the MCP transport refused the request (${status})`);
}

/** The request's headers as fetch's, for the transport (it reads Accept, Content-Type and MCP-Protocol-Version). */
function webHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) headers.set(name, value.join(', '));
  }
  return headers;
}
