import { z } from 'zod';
import type { Operation } from '../api/define-operation.ts';
import { operationId } from '../api/openapi.ts';
import type { RawInput } from '../api/parse-input.ts';
import { validationError } from '../errors.ts';

// The MCP face's tools, made from the operations table as the router, the
// CLI and the OpenAPI document are: one tool per operation, its name the
// OpenAPI operationId (`work_complete`: letters, digits and `_`, which every
// MCP client accepts), its input the operation's path, query and body fields
// as one object, its output the operation's output schema. Adding an
// operation adds its tool; an operation is left out only for a reason
// named in LEFT_OUT.

/** Operations that are no tool, and why. */
export const LEFT_OUT: Readonly<Record<string, string>> = {
  // A probe for load balancers and orchestrators, not a question an agent asks: `system_health` says the same and more.
  'system.healthz': 'a liveness probe for load balancers; system_health answers it for an agent',
  'system.readyz': 'a readiness probe for load balancers; system_health answers it for an agent',
  'ingest.create': "the collectors' route to their hub: batches of samples, made by estate collect --url, not by an agent",
};

/** What an MCP client sees of a tool (tools/list). */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema?: { type: 'object'; [key: string]: unknown };
  annotations: { title: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
}

export interface OperationTool {
  op: Operation;
  definition: ToolDefinition;
  /** A tool call's arguments as the operation's raw input: path, query (as text, as a URL carries it) and body fields. */
  rawInput: (args: Record<string, unknown>) => RawInput;
}

/** The tools of `operations`, in table order; throws when two input parts share a field name (one argument could not say which it is). */
export function operationTools(operations: readonly Operation[]): OperationTool[] {
  return operations.filter((op) => !(op.id in LEFT_OUT)).map(operationTool);
}

function operationTool(op: Operation): OperationTool {
  const parts = { path: op.input.path, query: op.input.query, body: op.input.body };
  const owner = new Map<string, keyof typeof parts>();
  for (const [part, schema] of Object.entries(parts) as [keyof typeof parts, z.ZodObject | undefined][]) {
    for (const field of Object.keys(schema?.shape ?? {})) {
      const other = owner.get(field);
      if (other) throw new Error(`operation ${op.id}: "${field}" is a field of both its ${other} and its ${part}, so its MCP tool cannot take it as one argument`);
      owner.set(field, part);
    }
  }
  const shape = Object.assign({}, ...Object.values(parts).map((s) => s?.shape ?? {}));
  const inputSchema = jsonSchema(z.strictObject(shape), 'input');
  const output = jsonSchema(op.output, 'output');
  const read = op.method === 'GET';
  const definition: ToolDefinition = {
    name: operationId(op),
    title: op.summary,
    description: [op.summary, op.description].filter(Boolean).join('\n\n'),
    inputSchema: inputSchema as ToolDefinition['inputSchema'],
    // MCP's structuredContent is an object: an operation that answers something else (a JSON string) has text only.
    ...(output.type === 'object' ? { outputSchema: output as ToolDefinition['outputSchema'] } : {}),
    annotations: {
      title: op.summary,
      readOnlyHint: read,
      destructiveHint: op.method === 'DELETE',
      // Reads change nothing; the writes store once per key (the same call again is a replay) and a delete of what is gone is a 404;
      // but each training start is a new run and each webhook test a new event.
      idempotentHint: op.id !== 'training.start' && op.id !== 'notify.test',
      // Answers that ask a forge or a language-model provider, or send a webhook, reach outside the estate.
      openWorldHint: op.tag === 'forge' || op.tag === 'providers' || op.id === 'notify.test',
    },
  };
  const rawInput = (args: Record<string, unknown>): RawInput => {
    const raw: { path: Record<string, string>; query: Record<string, string>; body: Record<string, unknown> } = { path: {}, query: {}, body: {} };
    const unknown: Record<string, unknown> = {};
    for (const [field, value] of Object.entries(args)) {
      const part = owner.get(field);
      if (part === 'body') raw.body[field] = value;
      else if (part && value !== undefined && value !== null) raw[part][field] = typeof value === 'string' ? value : JSON.stringify(value);
      else if (!part) unknown[field] = value;
    }
    // A field the operation does not take goes to its body, whose strict schema refuses it by name; without a body it is refused
    // here (an agent's misspelt argument is not dropped as an unknown query parameter is).
    if (op.input.body) Object.assign(raw.body, unknown);
    else if (Object.keys(unknown).length) {
      throw validationError(Object.keys(unknown).map((field) => ({ loc: ['body', field], msg: `Extra inputs are not permitted: ${definition.name} takes ${[...owner.keys()].join(', ') || 'no arguments'}`, type: 'extra_forbidden' })));
    }
    return { path: raw.path, query: raw.query, ...(op.input.body ? { body: raw.body } : {}) };
  };
  return { op, definition, rawInput };
}

/** `schema` as the JSON Schema an MCP client reads (draft 2020-12, inline; integers without the safe-integer bounds). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    override: ({ jsonSchema: node }) => {
      if (node.maximum === Number.MAX_SAFE_INTEGER) delete node.maximum;
      if (node.minimum === Number.MIN_SAFE_INTEGER) delete node.minimum;
    },
  }) as Record<string, unknown>;
  delete json.$schema;
  // A named schema (`.meta({ id })`) comes as a reference to its definition; MCP wants the object itself at the top.
  const ref = typeof json.$ref === 'string' ? /^#\/\$defs\/(.+)$/.exec(json.$ref)?.[1] : undefined;
  const defs = json.$defs as Record<string, Record<string, unknown>> | undefined;
  if (ref === undefined || !defs?.[ref]) return json;
  const { [ref]: root, ...others } = defs;
  const { $ref: _, $defs: __, ...rest } = json;
  return { ...rest, ...root, ...(Object.keys(others).length ? { $defs: others } : {}) };
}
