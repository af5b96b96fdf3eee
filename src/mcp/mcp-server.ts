import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Operation } from '../api/define-operation.ts';
import type { RawInput } from '../api/parse-input.ts';
import type { OperationResult } from '../api/run-operation.ts';
import { cliMessage } from '../cli/error-message.ts';
import { toEstateError } from '../errors.ts';
import { operationId } from '../api/openapi.ts';
import { type AnswerPage, type AnswerPages, PAGE_BYTES } from './answer-pages.ts';
import { addResourcesAndPrompts, type CallOperation } from './mcp-resources.ts';
import type { OperationTool, ToolDefinition } from './operation-tools.ts';

// The MCP face (issue 27): a server of the SDK whose tools are the
// operations table's (operation-tools.ts), each call run by `run`, locally
// against the data dir or on an estate server, as a CLI command would.

/** Runs one operation with its raw input: the answer's status and body, or a thrown EstateError. */
export type RunTool = (op: Operation, raw: RawInput) => Promise<OperationResult>;

const INSTRUCTIONS = [
  'estate watches a self-run estate of nodes and agents: its nodes and their series (trends, disks, pulse), builds, events, schedules of cron jobs, the work feed of completed tasks, published pieces and training runs.',
  'Start with summary_get or estate_status for the estate at a glance, events_list for what happened, and work_complete to record a task as done.',
].join(' ');

export interface McpServerOptions {
  /** The tools the caller may call. */
  tools: readonly OperationTool[];
  run: RunTool;
  version: string;
  /** Where answers over 64 KB wait for next_page. */
  pages: AnswerPages;
  /** The tools the caller's credential may not call, by name, with why (the HTTP API's 403 message). */
  refused?: ReadonlyMap<string, string>;
  /** Whose cut answers only it pages through (the credential's key id over HTTP). */
  owner?: string;
  /** The OpenAPI document, for the `estate://openapi` resource. */
  openApi: () => unknown;
}

/** The tool that pages through an answer cut at PAGE_BYTES (answer-pages.ts). */
const NEXT_PAGE: ToolDefinition = {
  name: 'next_page',
  title: 'The next page of an answer cut at 64 KB',
  description:
    'A tool answer over 64 KB of JSON is cut to the items that fit, and says so with a cursor (also in the result\'s _meta as "estate/next_cursor"). ' +
    'This gives the next page of that same answer (the items after those, in its order, with its other fields), and the next cursor while more remain. A cursor lasts 10 minutes and serves once.',
  inputSchema: { type: 'object', properties: { cursor: { type: 'string', description: 'The cursor a cut answer gave.' } }, required: ['cursor'], additionalProperties: false },
  annotations: { title: 'The next page of an answer cut at 64 KB', readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
};

/**
 * An MCP server offering `tools` and next_page, the resources and the prompt
 * (mcp-resources.ts); `run` answers the calls, whose answers over 64 KB
 * `pages` cuts. A tool `refused` is not listed, and a call of one is a tool
 * error saying why.
 */
export function createMcpServer({ tools, run, version, pages, refused = new Map(), owner = '', openApi }: McpServerOptions): Server {
  const byName = new Map(tools.map((t) => [t.definition.name, t]));
  const server = new Server(
    { name: 'estate', version },
    { capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, prompts: { listChanged: false } }, instructions: INSTRUCTIONS },
  );
  // Resources and prompts read through the tools' operations, refused as their tools are.
  const byOperation = new Map(tools.map((t) => [t.op.id, t]));
  const call: CallOperation = async (id, args) => {
    const tool = byOperation.get(id);
    if (!tool) throw new Error(refused.get(operationId({ id })) ?? `the operation ${id} is not offered here`);
    try {
      return (await run(tool.op, tool.rawInput(args))).body;
    } catch (err) {
      const error = toEstateError(err);
      throw new Error(error.code === 'internal' ? 'Internal error: the call failed; the operator can read the server log' : cliMessage(error));
    }
  };
  addResourcesAndPrompts(server, call, openApi);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...tools.map((t) => t.definition), NEXT_PAGE] }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name } = request.params;
    const args = request.params.arguments ?? {};
    if (name === NEXT_PAGE.name) {
      const cursor = typeof args.cursor === 'string' ? args.cursor : '';
      const page = pages.next(cursor, owner);
      if (!page) return toolError('this cursor is unknown or has expired (a cursor lasts 10 minutes and serves once): call the tool again');
      return pageResult(page, true);
    }
    const refusal = refused.get(name);
    if (refusal !== undefined) return toolError(refusal);
    const tool = byName.get(name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `estate has no tool named "${name}": tools/list names them`);
    try {
      const { body } = await run(tool.op, tool.rawInput(args));
      const page = pages.first(body, owner);
      if (!page) {
        const kb = Math.ceil(Buffer.byteLength(JSON.stringify(body)) / 1024);
        return toolError(`the answer is ${kb} KB, over the ${PAGE_BYTES / 1024} KB a tool answers, and cannot be cut into pages: narrow the call (a smaller limit, a filter, one file)`);
      }
      return pageResult(page, tool.definition.outputSchema !== undefined);
    } catch (err) {
      // The message the CLI prints for the same error; an internal error says only that (no path, no stack).
      const error = toEstateError(err);
      return toolError(error.code === 'internal' ? 'Internal error: the call failed; the operator can read the server log' : cliMessage(error));
    }
  });
  return server;
}

function toolError(text: string) {
  return { isError: true, content: [{ type: 'text' as const, text }] };
}

/** A page as a tool result: its JSON text (and structuredContent), and where it was cut, the cursor of the rest. */
function pageResult(page: AnswerPage, structured: boolean) {
  const content = [{ type: 'text' as const, text: page.text }];
  const { next } = page;
  if (next) {
    content.push({ type: 'text', text: `Cut at ${PAGE_BYTES / 1024} KB: ${next.remaining} of the answer's ${next.total} items remain; call next_page with {"cursor": "${next.cursor}"} for them.` });
  }
  return {
    content,
    ...(structured ? { structuredContent: page.body as Record<string, unknown> } : {}),
    ...(next ? { _meta: { 'estate/next_cursor': next.cursor } } : {}),
  };
}
