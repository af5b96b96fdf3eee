import { z } from 'zod';
import { needsCredential, pathParamNames, type Access, type Operation } from './define-operation.ts';

// The OpenAPI 3.1 document, generated from the operations table the router
// mounts, so the description cannot drift from the routes. Schemas are zod 4's
// JSON Schema output (draft 2020-12): `io: 'input'` for what a caller sends,
// `io: 'output'` for what the server answers.

/** The API version (the seed's `info.version`), independent of the package version. */
export const API_VERSION = '1.0.0';

export type JsonObject = { [key: string]: unknown };

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description: string };
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, JsonObject>>;
  components: {
    schemas: Record<string, JsonObject>;
    responses: Record<string, JsonObject>;
    securitySchemes: Record<string, JsonObject>;
  };
}

/**
 * A route outside the operations table (an HTML page, an event stream),
 * described for the document: it has no output schema, only a media type.
 */
export interface RouteDoc {
  id: string;
  method: 'GET';
  path: string;
  access: Access;
  tag: string;
  summary: string;
  description?: string;
  produces: 'text/html' | 'text/event-stream';
  query?: z.ZodObject;
  errors?: number[];
}

/** What the generator reads of an operation or a RouteDoc. */
type Described = Pick<Operation, 'id' | 'method' | 'path' | 'access' | 'scope' | 'summary' | 'description' | 'tag' | 'input' | 'status' | 'errors' | 'replies'> & {
  output: z.ZodType | undefined;
  produces: string;
};

function describedRoute(route: RouteDoc): Described {
  return {
    ...route,
    scope: 'read',
    description: route.description,
    input: { path: undefined, query: route.query, body: undefined },
    output: undefined,
    status: 200,
    errors: route.errors ?? [],
    replies: [],
  };
}

const SECURITY_SCHEMES = {
  ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key from `estate keys create` (or `ESTATE_API_KEY`).' },
  ApiKeyQuery: { type: 'apiKey', in: 'query', name: 'api_key', description: 'The same API key as a query parameter.' },
  BearerAuth: { type: 'http', scheme: 'bearer', description: 'An access token from `estate token create`, or an API key.' },
} as const;

const CREDENTIALS = Object.keys(SECURITY_SCHEMES).map((name) => ({ [name]: [] as string[] }));

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

/** Error statuses, each a shared response in `components.responses`. */
const ERROR_RESPONSES: Record<number, { name: string; description: string }> = {
  400: { name: 'BadRequest', description: 'Bad request.' },
  403: { name: 'Forbidden', description: 'Missing or invalid credential (checked before the input).' },
  404: { name: 'NotFound', description: 'Not found.' },
  409: { name: 'Conflict', description: 'Conflicts with a stored record: the same key was sent before with different fields.' },
  413: { name: 'PayloadTooLarge', description: 'The request body is larger than 1 MiB, or a part of it is larger than its documented limit (a training run\'s `params`).' },
  422: { name: 'UnprocessableEntity', description: 'Validation error: invalid parameters or body.' },
  429: { name: 'TooManyRequests', description: 'Too many requests.' },
  500: { name: 'InternalServerError', description: 'Internal server error.' },
  502: { name: 'BadGateway', description: 'An upstream source (the forge, a provider) failed or answered badly.' },
  503: { name: 'ServiceUnavailable', description: 'The source this route needs is not configured or not available.' },
  504: { name: 'GatewayTimeout', description: 'An upstream source did not answer in time.' },
  507: { name: 'InsufficientStorage', description: 'The data dir has no room to store the record.' },
};

const SUCCESS_TEXT: Record<number, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content' };

const DESCRIPTION = `The estate operations API: trends, disk, health, builds, events, state files,
publishing and work feeds, external sources and training runs of one estate.

**Credentials.** Protected routes take any one of \`X-API-Key: KEY\`,
\`Authorization: Bearer TOKEN\` (an access token or an API key) or \`?api_key=KEY\`;
a missing or invalid credential is **403**, checked before the input.
Public routes need none. Reading training runs takes an optional credential, which decides the user
(without one: \`GET /training/runs\` is \`[]\` and every run is 404); starting or deleting a run needs one.

**Errors** are JSON \`{"detail": "..."}\`; a **422** carries \`{"detail": [{"loc", "msg", "type"}]}\`
(HTTPValidationError). Besides the responses listed per route, every path answers
**404** \`{"detail":"Not Found"}\` when it is unknown and **405** with an \`Allow\` header
for a known path with another method. \`HEAD\` works wherever \`GET\` does.

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
  for (const [name, def] of Object.entries(local)) {
    // The same zod schema can differ as input and as output (defaults, extra keys): each variant gets its own name.
    const variant = `${name}${io === 'input' ? 'Input' : 'Output'}`;
    const taken = (n: string) => defs[n] !== undefined && JSON.stringify(defs[n]) !== JSON.stringify(def);
    let target = !taken(name) ? name : variant;
    for (let n = 2; taken(target); n++) target = `${variant}${n}`;
    renamed.set(name, target);
  }
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
  return { description: `Error ${status}.`, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } } };
}

function successResponse(op: Described, status: number, defs: Record<string, JsonObject>): JsonObject {
  const description = SUCCESS_TEXT[status] ?? 'Success';
  if (status === 204) return { description };
  if (op.produces !== 'application/json' || !op.output) return { description, content: { [op.produces]: { schema: { type: 'string' } } } };
  return { description, content: { 'application/json': { schema: toSchema(op.output, 'output', defs) } } };
}

function operationObject(op: Described, defs: Record<string, JsonObject>, used: Set<number>): JsonObject {
  const object: JsonObject = { operationId: operationId(op), tags: [op.tag], summary: op.summary };
  if (op.description) object.description = op.description;
  const params = parameters(op, defs);
  if (params.length) object.parameters = params;
  if (op.input.body) {
    object.requestBody = { required: true, content: { 'application/json': { schema: toSchema(op.input.body, 'input', defs) } } };
  }
  const responses: Record<string, JsonObject> = {};
  for (const status of [op.status, ...op.replies]) responses[String(status)] = successResponse(op, status, defs);
  const errors = new Set(op.errors);
  if (op.access !== 'public') errors.add(403);
  if (op.input.body) errors.add(413);
  if (op.input.path || op.input.query || op.input.body) errors.add(422);
  for (const status of [...errors].sort((a, b) => a - b)) responses[String(status)] = errorResponse(status, used);
  object.responses = responses;
  // `{}` (anonymous allowed) exactly where the router lets a call without a credential through.
  object.security = op.access === 'public' ? [] : needsCredential(op) ? structuredClone(CREDENTIALS) : [...structuredClone(CREDENTIALS), {}];
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
  for (const op of [...operations, ...routes.map(describedRoute)]) {
    (paths[op.path] ??= {})[op.method.toLowerCase()] = operationObject(op, schemas, used);
    if (!tags.includes(op.tag)) tags.push(op.tag);
  }
  const responses: Record<string, JsonObject> = {};
  for (const status of [...used].sort((a, b) => a - b)) {
    const known = ERROR_RESPONSES[status];
    if (!known) continue;
    const { name, description } = known;
    const schema = status === 422 ? 'HTTPValidationError' : 'ErrorResponse';
    responses[name] = { description, content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } } };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'estate', version: API_VERSION, description: DESCRIPTION },
    tags: tags.map((name) => ({ name })),
    paths,
    components: { schemas, responses, securitySchemes: structuredClone(SECURITY_SCHEMES) },
  };
}
