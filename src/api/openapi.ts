import { z } from 'zod';
import type { Scope } from './context.ts';
import { needsCredential, pathParamNames, type Access, type Operation } from './define-operation.ts';
import { MAX_INGEST_BYTES } from './operations/ingest.ts';

// The OpenAPI 3.1 document, generated from the operations table the router
// mounts, so the description cannot drift from the routes. Schemas are zod 4's
// JSON Schema output (draft 2020-12): `io: 'input'` for what a caller sends,
// `io: 'output'` for what the server answers.

/** The API version (the seed's `info.version`), independent of the package version. */
export const API_VERSION = '1.0.0';

export type JsonObject = { [key: string]: unknown };

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string; license: { name: string; identifier: string } };
  servers: { url: string; description: string }[];
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, JsonObject>>;
  components: {
    schemas: Record<string, JsonObject>;
    responses: Record<string, JsonObject>;
    parameters: Record<string, JsonObject>;
    headers: Record<string, JsonObject>;
    securitySchemes: Record<string, JsonObject>;
  };
}

/**
 * A route outside the operations table (an HTML page, an event stream),
 * described for the document: it has no output schema, only a media type.
 */
export interface RouteDoc {
  id: string;
  method: 'GET' | 'POST';
  path: string;
  access: Access;
  tag: string;
  summary: string;
  description?: string;
  produces: 'text/html' | 'text/event-stream' | 'text/plain' | 'application/json';
  /** A JSON route's request body and answer (`POST /mcp`: JSON-RPC). */
  body?: z.ZodObject;
  output?: z.ZodType;
  /** Other success statuses, with no body (202: a JSON-RPC notification taken). */
  replies?: number[];
  /** The scope a credential needs, for a route that is not public (default `read`). */
  scope?: Scope;
  query?: z.ZodObject;
  errors?: number[];
  /** Answers with an ETag (and 304 to `If-None-Match`): a page that is the same bytes for the life of the process. */
  etag?: boolean;
}

/** What the generator reads of an operation or a RouteDoc. */
type Described = Pick<Operation, 'id' | 'method' | 'path' | 'access' | 'scope' | 'summary' | 'description' | 'tag' | 'input' | 'status' | 'errors' | 'replies'> & {
  output: z.ZodType | undefined;
  produces: string;
  /** The 201 answer carries a `Location` header. */
  locates?: boolean;
  /** How it answers 503 (Operation.unavailable); the pages may, like most operations. */
  unavailable?: Operation['unavailable'];
  /** A route outside the table that sends an ETag (RouteDoc.etag). */
  etag?: boolean;
};

function describedRoute(route: RouteDoc): Described {
  return {
    ...route,
    scope: route.scope ?? 'read',
    description: route.description,
    input: { path: undefined, query: route.query, body: route.body },
    output: route.output,
    status: 200,
    // Every route outside the table is charged to the client's rate limit too.
    errors: [...new Set([...(route.errors ?? []), 429])],
    replies: route.replies ?? [],
  };
}

const PRECEDENCE =
  'When a request carries several credentials, only the first present of `X-API-Key`, `Authorization: Bearer`, `?api_key=` is read, valid or not. ' +
  'The scope an operation needs (`read`, `write`, `ingest` for `POST /ingest`, which `write` opens too, or `metrics` for `GET /metrics`, which `read` opens too) is listed in its security requirements and in `x-required-scope`. ' +
  'An `ingest` key opens only `POST /ingest`; one made with `estate keys create --scope ingest --node NAME` may send only the samples of node NAME.';

const SECURITY_SCHEMES = {
  ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: `An API key from \`estate keys create\` (or \`ESTATE_API_KEY\`), or an access token. Read first. ${PRECEDENCE}` },
  ApiKeyQuery: {
    type: 'apiKey',
    in: 'query',
    name: 'api_key',
    description: `The same API key as a query parameter; read only when neither header is sent, and an invalid credential when sent more than once. ${PRECEDENCE}`,
  },
  BearerAuth: { type: 'http', scheme: 'bearer', description: `An access token from \`estate token create\`, or an API key; read when \`X-API-Key\` is absent. ${PRECEDENCE}` },
} as const;

/**
 * The security requirements of a route: any one carrier, each naming the
 * route's scope (OpenAPI 3.1 lets a non-OAuth scheme list the roles it needs),
 * plus `{}` (anonymous) exactly where the router lets a call without a credential through.
 */
function securityOf(op: Described): JsonObject[] {
  if (op.access === 'public') return [];
  const any = Object.keys(SECURITY_SCHEMES).map((name) => ({ [name]: [op.scope] }));
  return needsCredential(op) ? any : [...any, {}];
}

const ERROR_SCHEMAS: Record<string, JsonObject> = {
  ErrorResponse: {
    type: 'object',
    description: 'Every error but 422: one human-readable sentence.',
    properties: { detail: { type: 'string' } },
    required: ['detail'],
    additionalProperties: false,
  },
  ValidationError: {
    type: 'object',
    description: 'One problem with the input, shaped like pydantic v2\'s.',
    properties: {
      loc: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'integer' }] }, description: 'Where: `["query","limit"]`, `["path","file_name"]`, `["body","title"]`.' },
      msg: { type: 'string', description: 'What is wrong, for a human.' },
      type: { type: 'string', description: 'A pydantic v2 error code where one fits: `missing`, `int_parsing`, `less_than_equal`, `extra_forbidden`, `json_invalid`, …' },
    },
    required: ['loc', 'msg', 'type'],
    additionalProperties: false,
  },
  HTTPValidationError: {
    type: 'object',
    description: 'The 422 body: every problem found in the input.',
    properties: { detail: { type: 'array', items: { $ref: '#/components/schemas/ValidationError' } } },
    required: ['detail'],
    additionalProperties: false,
  },
};

/** Response headers, each a shared header in `components.headers`. */
const HEADERS: Record<string, JsonObject> = {
  XRequestId: {
    description: 'The request\'s id, on every answer: the `X-Request-Id` the client sent when it is 1–128 characters of `[A-Za-z0-9._-]`, else a new UUID. The access log line carries it.',
    required: true,
    schema: { type: 'string', minLength: 1, maxLength: 128 },
  },
  ETag: {
    description:
      'A validator of the answer: send it back in `If-None-Match` to get **304** while the answer is unchanged. Strong (`"…"`), of the answer\'s bytes; ' +
      'weak (`W/"…"`) on the dashboard aggregates, build digests and statistics, of everything but their volatile fields (`generated_at`, `uptime_s`, the live `runtime`, the moving window\'s `since`/`until`, when and how long the statistics command ran).',
    required: true,
    schema: { type: 'string' },
  },
  RetryAfter: {
    description: 'Seconds to wait before trying again: always sent with 429, and with the 503 of `/readyz`.',
    required: true,
    schema: { type: 'integer', minimum: 1 },
  },
  Allow: { description: 'The methods the path answers, e.g. `GET, HEAD`.', required: true, schema: { type: 'string' } },
  Location: { description: 'Where the created resource can be read back (a path relative to the server).', required: true, schema: { type: 'string' } },
};

/** A header of `components.headers` under its HTTP name. */
const header = (name: keyof typeof HEADERS & string): JsonObject => ({ $ref: `#/components/headers/${name}` });

const REQUEST_ID = { 'X-Request-Id': header('XRequestId') };

/** `Retry-After` on the shared 503, which is not always load shedding: sent when it is (too many expensive calls, unread answers, a lock held too long) or the store does not answer. */
const SHED_RETRY_AFTER: JsonObject = {
  description: 'Seconds to wait before trying again; sent when the server sheds load or its store does not answer, not when a source is missing.',
  required: false,
  schema: { type: 'integer', minimum: 1 },
};

/** Error statuses, each a shared response in `components.responses`. */
const ERROR_RESPONSES: Record<number, { name: string; description: string; headers?: Record<string, JsonObject> }> = {
  400: { name: 'BadRequest', description: 'Bad request.' },
  403: {
    name: 'Forbidden',
    description: 'Missing or invalid credential, or one without the scope the route needs (`x-required-scope`); checked before the input is read.',
  },
  404: { name: 'NotFound', description: 'Not found; also the answer, `{"detail":"Not Found"}`, to any path the API does not have.' },
  405: {
    name: 'MethodNotAllowed',
    description: 'The answer to a method this path does not have (listed on every operation, for the methods beside it); `Allow` lists those it answers.',
    headers: { Allow: header('Allow') },
  },
  406: { name: 'NotAcceptable', description: 'The answer cannot be given in a media type the request accepts (`POST /mcp` needs `Accept: application/json, text/event-stream`, as MCP clients send).' },
  409: { name: 'Conflict', description: 'Conflicts with a stored record: the same key was sent before with different fields.' },
  413: {
    name: 'PayloadTooLarge',
    description: `The request body is larger than the route's limit (1 MiB; \`POST /ingest\`: ${MAX_INGEST_BYTES / 1024 / 1024} MiB), or a part of it is larger than its documented limit (a training run's \`params\`).`,
  },
  415: { name: 'UnsupportedMediaType', description: 'The request has a body whose `Content-Type` is not `application/json` (or a `+json` type), or none; checked before the body is read.' },
  422: {
    name: 'UnprocessableEntity',
    description: 'Validation error: invalid parameters or body, or a query parameter sent more than once (`type: "repeated_parameter"` at its `loc`).',
  },
  429: { name: 'TooManyRequests', description: 'Over the client\'s request rate (its credential\'s, else its address\'s).', headers: { 'Retry-After': header('RetryAfter') } },
  500: { name: 'InternalServerError', description: 'Internal server error.' },
  502: { name: 'BadGateway', description: 'An upstream source (the forge, a provider) failed or answered badly.' },
  503: {
    name: 'ServiceUnavailable',
    description:
      'The source this route needs is not configured or not available (the data dir cannot be read or written, the credential store does not ' +
      'parse, the PostgreSQL store is down: then with `Retry-After`), or the server is shedding load (then with `Retry-After`).',
    headers: { 'Retry-After': SHED_RETRY_AFTER },
  },
  504: { name: 'GatewayTimeout', description: 'An upstream source did not answer in time.' },
  507: { name: 'InsufficientStorage', description: 'The data dir has no room to store the record.' },
};

/** Answered to any request, whatever the route (an unknown path): listed in `components.responses` even where no route lists it. */
const ALWAYS_LISTED = [404];

/** `If-None-Match` on the routes that send an ETag. */
const PARAMETERS: Record<string, JsonObject> = {
  IfNoneMatch: {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'The `ETag` of an answer the client holds: **304** with no body while the answer is still the same.',
    schema: { type: 'string' },
  },
};

/** One sentence a reader of the rendered docs wants above each group of operations. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  system: 'Metadata, liveness and readiness probes and the live health of this server.',
  trends: 'Trend data points from the trend log, as stored.',
  disk: 'Disk snapshots from the disk snapshot log, as stored.',
  health: 'The health pulse log and the overall status it gives.',
  builds: 'Build digests: totals and success rates over a window of days, overall and by project.',
  events: 'Estate events derived from the heartbeat and scoreboard state files.',
  hub: 'The hub: samples sent by every node\'s collector (`POST /ingest`, with an `ingest` or `write` credential) and every node at a glance.',
  state: 'The estate\'s state files (scoreboard, heartbeat, estate map), parsed or as text.',
  training: 'Training runs, each visible only to the user whose credential created it.',
  stats: 'Site statistics printed by the configured statistics command.',
  providers: 'Reachability of the configured language-model providers.',
  forge: 'Repositories and issues of the forge, and the repository ledger.',
  summary: 'One answer that gathers every data source, each in its own section.',
  estate: 'The estate dashboard\'s views: agents, activity and the node\'s status card.',
  garden: 'The garden feed: published writings, the estate pulse and identity.',
  work: 'Kanban task completions: recording them, the feed, its live stream and page.',
  publishing: 'Published pieces: registering them and listing them by site, type or recency.',
  notify: 'Webhooks: the deliveries of watched events to the notify targets (Standard Webhooks, a durable outbox) and test events.',
};

const SUCCESS_TEXT: Record<number, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content' };

/** The routes whose 200 answers carry an ETag (sendJson): JSON reads. */
function sendsEtag(op: Pick<Described, 'method' | 'produces' | 'output' | 'etag'>): boolean {
  return op.method === 'GET' && ((op.produces === 'application/json' && op.output !== undefined) || op.etag === true);
}

const DESCRIPTION = `The estate operations API: trends, disk, health, builds, events, state files,
publishing and work feeds, external sources and training runs of one estate.

**Credentials.** Protected routes take any one of \`X-API-Key: KEY\`,
\`Authorization: Bearer TOKEN\` (an access token or an API key) or \`?api_key=KEY\`;
a missing or invalid credential, or one without the route's scope (\`read\` for reads, \`write\` for writes,
\`ingest\` or \`write\` for \`POST /ingest\`, \`metrics\` or \`read\` for \`GET /metrics\`, listed in each operation's security requirements and \`x-required-scope\`), is **403**,
checked before the input. An \`ingest\` key opens only \`POST /ingest\`, and one bound to a node (\`--node\`) only for that node's samples.
When several are sent, only the first present in that order is read, valid or not; \`api_key\` sent twice is invalid.
Public routes need none and ignore one that is sent. Reading training runs takes an optional credential, which decides the user
(without one: \`GET /training/runs\` is \`[]\` and every run is 404); starting or deleting a run needs one.

**Requests.** A body must be JSON sent as \`Content-Type: application/json\`, else **415**. A query parameter
sent twice (\`limit=1&limit=2\`) is **422** at its \`loc\`; parameters a route does not take are ignored.

**Errors** are JSON \`{"detail": "..."}\`; a **422** carries \`{"detail": [{"loc", "msg", "type"}]}\`
(HTTPValidationError). Besides the responses listed per route, every path answers
**404** \`{"detail":"Not Found"}\` when it is unknown and **405** with an \`Allow\` header
for a known path with another method (\`components.responses\` NotFound and MethodNotAllowed).
Every answer carries \`X-Request-Id\`; **429** and load-shedding **503** carry \`Retry-After\`.
\`HEAD\` works wherever \`GET\` does.

**Caching.** JSON reads answer with an \`ETag\`; sent back in \`If-None-Match\`, it gets **304** with no body
while the answer is unchanged. The dashboard aggregates (\`/summary\`, \`/api/garden\`, \`/estate/status\`,
\`/estate/agents\`), the build digests (\`/builds\`, \`/builds/recent\`) and \`/stats\` send a weak tag that leaves out
their volatile fields (a generation time, an uptime, the live runtime, the moving window's ends, when the statistics
command ran and for how long), so a dashboard polling
them gets 304 while the data behind them is unchanged.

**Lists** are \`{"items": [...], "count": N, ...}\`, newest first; \`GET /training/runs\` is a bare array.`;

/** `trends.list` → `trends_list` (Swagger UI uses operation ids in DOM ids and deep links). */
export function operationId(op: Pick<Operation, 'id'>): string {
  return op.id.replace(/[^A-Za-z0-9_]/g, '_');
}

/** `z.int()` bounds itself to the safe integers; saying so on every count is noise. */
function dropSafeIntegerBounds({ jsonSchema }: { jsonSchema: JsonObject }): void {
  if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
  if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
}

/** A zod schema as an embedded JSON Schema, its `$defs` moved to `components.schemas`. */
function toSchema(schema: z.ZodType, io: 'input' | 'output', defs: Record<string, JsonObject>): JsonObject {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any', override: dropSafeIntegerBounds }) as JsonObject;
  delete json.$schema;
  const local = json.$defs as Record<string, JsonObject> | undefined;
  if (!local) return json;
  delete json.$defs;
  const renamed = new Map<string, string>();
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (node === null || typeof node !== 'object') return node;
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(node)) {
      const m = k === '$ref' && typeof v === 'string' ? /^#\/\$defs\/(.+)$/.exec(v) : null;
      out[k] = m ? `#/components/schemas/${renamed.get(m[1] as string) ?? (m[1] as string)}` : rewrite(v);
    }
    return out;
  };
  for (const [name, def] of Object.entries(local)) {
    // The same zod schema can differ as input and as output (defaults, extra keys): each variant gets its own name.
    // Compared as they would be stored (references as written so far), so the same model met again keeps its name.
    const variant = `${name}${io === 'input' ? 'Input' : 'Output'}`;
    const stored = JSON.stringify(rewrite(def));
    const taken = (n: string) => defs[n] !== undefined && JSON.stringify(defs[n]) !== stored;
    let target = !taken(name) ? name : variant;
    for (let n = 2; taken(target); n++) target = `${variant}${n}`;
    renamed.set(name, target);
  }
  for (const [name, def] of Object.entries(local)) defs[renamed.get(name) as string] = rewrite(def) as JsonObject;
  return rewrite(json) as JsonObject;
}

function parameters(op: Described, defs: Record<string, JsonObject>): JsonObject[] {
  const out: JsonObject[] = [];
  const add = (where: 'path' | 'query', object: z.ZodObject | undefined, order: string[]) => {
    if (!object) return;
    const json = toSchema(object, 'input', defs);
    const props = (json.properties ?? {}) as Record<string, JsonObject>;
    const required = new Set((json.required ?? []) as string[]);
    for (const name of order.length ? order : Object.keys(props)) {
      const { description, examples, ...schema } = props[name] ?? {};
      const param: JsonObject = { name, in: where, required: where === 'path' || required.has(name), schema };
      if (typeof description === 'string') param.description = description;
      if (Array.isArray(examples) && examples.length) param.example = examples[0];
      out.push(param);
    }
  };
  add('path', op.input.path, pathParamNames(op.path));
  add('query', op.input.query, []);
  return out;
}

function errorResponse(status: number, used: Set<number>): JsonObject {
  const known = ERROR_RESPONSES[status];
  used.add(status);
  if (known) return { $ref: `#/components/responses/${known.name}` };
  return { description: `Error ${status}.`, headers: REQUEST_ID, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } };
}

/** A 503 that always carries `Retry-After` (an operation's `unavailable: 'retry-after'`). */
function retryingUnavailable(): JsonObject {
  return {
    description: 'Not available now (`detail` says what failed); always with `Retry-After`, the seconds before asking again.',
    headers: { 'Retry-After': header('RetryAfter'), ...REQUEST_ID },
    content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } },
  };
}

function successResponse(op: Described, status: number, defs: Record<string, JsonObject>): JsonObject {
  const description = SUCCESS_TEXT[status] ?? 'Success';
  const headers: Record<string, JsonObject> = { ...REQUEST_ID };
  if (status === 200 && sendsEtag(op)) headers.ETag = header('ETag');
  if (status === 201 && op.locates) headers.Location = header('Location');
  // 204, and 202 (a JSON-RPC notification taken by /mcp), carry no body.
  if (status === 204 || status === 202) return { description, headers };
  if (op.produces !== 'application/json' || !op.output) return { description, headers, content: { [op.produces]: { schema: { type: 'string' } } } };
  return { description, headers, content: { 'application/json': { schema: toSchema(op.output, 'output', defs) } } };
}

const NOT_MODIFIED: JsonObject = {
  description: 'Not Modified: the answer is still the one of the `If-None-Match` tag; no body.',
  headers: { ETag: header('ETag'), ...REQUEST_ID },
};

function operationObject(op: Described, defs: Record<string, JsonObject>, used: Set<number>): JsonObject {
  const object: JsonObject = { operationId: operationId(op), tags: [op.tag], summary: op.summary };
  if (op.description) object.description = op.description;
  const params = parameters(op, defs);
  if (sendsEtag(op)) params.push({ $ref: '#/components/parameters/IfNoneMatch' });
  if (params.length) object.parameters = params;
  if (op.input.body) {
    object.requestBody = { required: true, content: { 'application/json': { schema: toSchema(op.input.body, 'input', defs) } } };
  }
  const responses: Record<string, JsonObject> = {};
  for (const status of [op.status, ...op.replies]) responses[String(status)] = successResponse(op, status, defs);
  if (sendsEtag(op)) responses['304'] = { $ref: '#/components/responses/NotModified' };
  const errors = new Set(op.errors);
  if (op.access !== 'public') errors.add(403);
  if (op.input.body) errors.add(413).add(415);
  if (op.input.path || op.input.query || op.input.body) errors.add(422);
  // Every path answers the methods it lacks with 405 (and Allow).
  errors.add(405);
  if (op.unavailable !== 'never') errors.add(503);
  for (const status of [...errors].sort((a, b) => a - b)) responses[String(status)] = errorResponse(status, used);
  if (errors.has(503) && op.unavailable === 'retry-after') responses['503'] = retryingUnavailable();
  object.responses = responses;
  object.security = securityOf(op);
  if (op.access !== 'public') object['x-required-scope'] = op.scope;
  return object;
}

/**
 * The OpenAPI 3.1 document of `operations` (and of the `routes` outside the
 * table): every route with its parameters, request body, success and error
 * responses, tags and security.
 * Pure: the same table gives the same document.
 *
 * @example
 *   const doc = buildOpenApi(operations);
 *   doc.paths['/trends'].get.parameters; // [{ name: 'limit', in: 'query', schema: { type: 'integer', default: 100, minimum: 1, maximum: 1000 }, … }]
 */
export function buildOpenApi(operations: readonly Operation[], routes: readonly RouteDoc[] = []): OpenApiDocument {
  const schemas: Record<string, JsonObject> = structuredClone(ERROR_SCHEMAS);
  const paths: OpenApiDocument['paths'] = {};
  const tags: string[] = [];
  const used = new Set<number>();
  for (const op of [...operations.map((o) => ({ ...o, locates: o.location !== undefined })), ...routes.map(describedRoute)]) {
    (paths[op.path] ??= {})[op.method.toLowerCase()] = operationObject(op, schemas, used);
    if (!tags.includes(op.tag)) tags.push(op.tag);
  }
  const responses: Record<string, JsonObject> = {};
  const etags = Object.values(paths).some((item) => Object.values(item).some((o) => (o.responses as JsonObject)['304'] !== undefined));
  if (etags) responses.NotModified = structuredClone(NOT_MODIFIED);
  for (const status of [...new Set([...used, ...ALWAYS_LISTED])].sort((a, b) => a - b)) {
    const known = ERROR_RESPONSES[status];
    if (!known) continue;
    const { name, description } = known;
    const schema = status === 422 ? 'HTTPValidationError' : 'ErrorResponse';
    responses[name] = { description, headers: { ...known.headers, ...REQUEST_ID }, content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } } };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'estate', version: API_VERSION, description: DESCRIPTION, license: { name: 'MIT', identifier: 'MIT' } },
    // Relative: the server the document was fetched from, whatever address or proxy prefix-free host it was reached by.
    servers: [{ url: '/', description: 'The estate server that serves this document.' }],
    tags: tags.map((name) => (TAG_DESCRIPTIONS[name] ? { name, description: TAG_DESCRIPTIONS[name] } : { name })),
    paths,
    components: {
      schemas,
      responses,
      parameters: etags ? structuredClone(PARAMETERS) : {},
      headers: structuredClone(HEADERS),
      securitySchemes: structuredClone(SECURITY_SCHEMES),
    },
  };
}
