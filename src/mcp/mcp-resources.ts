import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { STATE_FILES } from '../core/state-files.ts';

// What the MCP face offers beside its tools: resources (the state files,
// the OpenAPI document, the latest health) and a prompt (a daily briefing
// of the estate). Each is read through an operation of the table
// (`call`), so a credential that may not call that operation over HTTP
// cannot read it here either.

/** Runs the operation `id` with `args` as its tool would; throws an Error whose message says why it could not (refused, failed). */
export type CallOperation = (id: string, args: Record<string, unknown>) => Promise<unknown>;

const STATE_PREFIX = 'estate://state/';

/** The resources, each read by an operation (or, the OpenAPI document, by `openApi`). */
function resources(openApi: () => unknown) {
  return [
    { uri: 'estate://health', name: 'health', title: 'The estate\'s health now', description: 'GET /health: status, version, uptime and the checks of the data dir and the store.', mimeType: 'application/json', read: (call: CallOperation) => call('system.health', {}) },
    { uri: 'estate://openapi', name: 'openapi', title: 'The HTTP API (OpenAPI 3.1)', description: 'The OpenAPI document the server serves at /api/openapi.json: every route, its input and its answers.', mimeType: 'application/json', read: async () => openApi() },
    ...STATE_FILES.map((name) => ({
      uri: `${STATE_PREFIX}${name}`,
      name: `state/${name}`,
      title: `The state file ${name}.json`,
      description: `GET /state/${name}: the JSON document other tools keep in state/${name}.json.`,
      mimeType: 'application/json',
      read: (call: CallOperation) => call('state.get', { file_name: name }),
    })),
  ];
}

/** Resources and prompts on `server`, read through `call`. */
export function addResourcesAndPrompts(server: Server, call: CallOperation, openApi: () => unknown): void {
  const all = resources(openApi);
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: all.map(({ read: _, ...listed }) => listed) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [{ uriTemplate: `${STATE_PREFIX}{name}`, name: 'state', title: 'A state file', description: `GET /state/{name}: one of ${STATE_FILES.join(', ')}.`, mimeType: 'application/json' }],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    const resource = all.find((r) => r.uri === uri);
    if (!resource) throw new McpError(ErrorCode.InvalidParams, `no resource ${uri}: resources/list names them (state files: ${STATE_FILES.map((n) => STATE_PREFIX + n).join(', ')})`);
    const body = await resource.read(call).catch((err: unknown) => {
      throw new McpError(ErrorCode.InvalidRequest, (err as Error).message);
    });
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(body, null, 2) }] };
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: [BRIEFING] }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    if (request.params.name !== BRIEFING.name) throw new McpError(ErrorCode.InvalidParams, `no prompt named "${request.params.name}": prompts/list names them`);
    return { description: BRIEFING.description, messages: [{ role: 'user' as const, content: { type: 'text' as const, text: await briefing(call) } }] };
  });
}

const BRIEFING = {
  name: 'daily_briefing',
  title: 'A daily briefing of the estate',
  description: 'What an operator reads first in the morning: the estate at a glance, what happened in the last day (events: schedules late or down, nodes stale, pulses degraded, providers down), and the builds that failed, gathered from /summary, /events and /builds?days=1.',
};

/** The most characters of each part's JSON in the briefing, so the prompt stays small. */
const PART_CHARS = 16_000;

/** The briefing's text: the request, then each part's JSON (or why it could not be read with this credential). */
async function briefing(call: CallOperation): Promise<string> {
  const part = async (title: string, id: string, args: Record<string, unknown>) => {
    try {
      const json = JSON.stringify(await call(id, args));
      return `## ${title}\n${json.length > PART_CHARS ? `${json.slice(0, PART_CHARS)} … (cut at ${PART_CHARS} characters)` : json}`;
    } catch (err) {
      return `## ${title}\n(not read: ${(err as Error).message})`;
    }
  };
  const parts = await Promise.all([
    part('The estate at a glance (GET /summary)', 'summary.get', {}),
    part('The newest events (GET /events?limit=50)', 'events.list', { limit: 50 }),
    part('Builds of the last day (GET /builds?days=1)', 'builds.digest', { days: 1 }),
  ]);
  return [
    `Brief the operator of this estate on where it stands now (${new Date().toISOString()}), in a few short paragraphs:`,
    '1. Overall: healthy or not, and how many nodes report.',
    '2. What went wrong in the last 24 hours: schedules late or down, nodes stale, pulses degraded or unhealthy (with the failing checks), providers down, failed builds; say which have recovered since.',
    '3. What needs attention first, and why.',
    'Use only the data below; say when a part could not be read.',
    '',
    ...parts,
  ].join('\n');
}
