import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Operation } from '../api/define-operation.ts';
import type { RawInput } from '../api/parse-input.ts';
import type { OperationResult } from '../api/run-operation.ts';
import { cliMessage } from '../cli/error-message.ts';
import { toEstateError } from '../errors.ts';
import type { OperationTool } from './operation-tools.ts';

// The MCP face (issue 27): a server of the SDK whose tools are the
// operations table's (operation-tools.ts), each call run by `run`, locally
// against the data dir or on an estate server, as a CLI command would.

/** Runs one operation with its raw input: the answer's status and body, or a thrown EstateError. */
export type RunTool = (op: Operation, raw: RawInput) => Promise<OperationResult>;

const INSTRUCTIONS = [
  'estate watches a self-run estate of nodes and agents: its nodes and their series (trends, disks, pulse), builds, events, schedules of cron jobs, the work feed of completed tasks, published pieces and training runs.',
  'Start with summary_get or estate_status for the estate at a glance, events_list for what happened, and work_complete to record a task as done.',
].join(' ');

/** An MCP server offering `tools`; `run` answers their calls. */
export function createMcpServer(tools: readonly OperationTool[], run: RunTool, version: string): Server {
  const byName = new Map(tools.map((t) => [t.definition.name, t]));
  const server = new Server({ name: 'estate', version }, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map((t) => t.definition) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `estate has no tool named "${request.params.name}": tools/list names them`);
    try {
      const { body } = await run(tool.op, tool.rawInput(request.params.arguments ?? {}));
      const text = JSON.stringify(body);
      return tool.definition.outputSchema ? { content: [{ type: 'text', text }], structuredContent: body as Record<string, unknown> } : { content: [{ type: 'text', text }] };
    } catch (err) {
      // The message the CLI prints for the same error; an internal error says only that (no path, no stack).
      const error = toEstateError(err);
      return { isError: true, content: [{ type: 'text', text: error.code === 'internal' ? 'Internal error: the call failed; the operator can read the server log' : cliMessage(error) }] };
    }
  });
  return server;
}
