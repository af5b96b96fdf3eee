import { Command } from 'commander';
import type { EstateContext, Principal } from '../../api/context.ts';
import type { Operation } from '../../api/define-operation.ts';
import { EstateError } from '../../errors.ts';
import { VERSION } from '../../version.ts';
import { addDataDirOptions, addRemoteOptions, type CommonOptions } from '../common-options.ts';
import type { CliIO } from '../io.ts';
import { localContext, remoteTarget } from '../local-context.ts';

/** The common options it takes (no output options: its output is the protocol), and whose training runs it serves locally. */
type McpOptions = Pick<CommonOptions, 'dataDir' | 'config' | 'store' | 'url' | 'apiKey' | 'context'> & { user?: string };

export function mcpCommand(io: CliIO): Command {
  const cmd = new Command('mcp')
    .description('Serve the Model Context Protocol on stdin and stdout for a local agent: every operation of the API is a tool')
    .option('--user <user>', "locally: whose training runs the training tools see (with --url the credential decides)");
  addRemoteOptions(addDataDirOptions(cmd));
  cmd.addHelpText(
    'after',
    '\nAn MCP client starts it and speaks JSON-RPC on its stdin and stdout; nothing\n' +
      'else is written to stdout. Each tool is an operation of the HTTP API (its name\n' +
      'the OpenAPI operationId: summary_get, events_list, work_complete, ...), run\n' +
      'against the data dir as the commands run, or on the server of --url with its key.\n' +
      '\nIn a client\'s configuration (Claude Desktop, Cursor, the MCP Inspector):\n' +
      '  {"mcpServers": {"estate": {"command": "estate", "args": ["mcp", "--data-dir", "/var/lib/estate"]}}}\n' +
      '\nestate serve answers the same over HTTP at /mcp (Streamable HTTP, with the API\'s keys).\n' +
      '\nExamples:\n  $ estate mcp --data-dir /var/lib/estate\n  $ estate mcp --url http://hub:8080 --api-key "$ESTATE_API_KEY"\n',
  );
  cmd.action(async (options: McpOptions) => {
    // The SDK and the table load only for this command.
    const [{ operations }, { operationTools }, { createMcpServer }, { StdioServerTransport }, { runOperation }, { AnswerPages }] = await Promise.all([
      import('../../api/operations/index.ts'),
      import('../../mcp/operation-tools.ts'),
      import('../../mcp/mcp-server.ts'),
      import('@modelcontextprotocol/sdk/server/stdio.js'),
      import('../../api/run-operation.ts'),
      import('../../mcp/answer-pages.ts'),
    ]);
    const [{ buildOpenApi }, { PAGE_ROUTE_DOCS }] = await Promise.all([import('../../api/openapi.ts'), import('../../server/docs-routes.ts')]);
    const target = remoteTarget(options, io);
    // A bad --user is a usage error now, not at the first training tool's call.
    if (options.user !== undefined) {
      if (target) throw new EstateError('usage', '--user is for the local data dir: with --url the credential decides the user');
      await localPrincipal({ access: 'user' } as Operation, options.user);
    }
    const ctx: EstateContext | undefined = target ? undefined : localContext(options, io);
    try {
      const call = target
        ? async (op: Operation, raw: Parameters<typeof runOperation>[2]) => (await import('../remote-call.ts')).remoteCall(op, target, raw)
        : async (op: Operation, raw: Parameters<typeof runOperation>[2]) => runOperation(op, ctx as EstateContext, raw, await localPrincipal(op, options.user));
      // The calls under way: a client that closes stdin right after its last request still gets every answer.
      const inflight = new Set<Promise<unknown>>();
      const run = (op: Operation, raw: Parameters<typeof runOperation>[2]) => {
        const p = call(op, raw);
        inflight.add(p);
        void p.finally(() => inflight.delete(p)).catch(() => {});
        return p;
      };
      const server = createMcpServer({ tools: operationTools(operations), run, version: VERSION, pages: new AnswerPages(), openApi: () => buildOpenApi(operations, PAGE_ROUTE_DOCS) });
      const closed = new Promise<void>((resolve) => (server.onclose = resolve));
      await server.connect(new StdioServerTransport());
      // The client closing our stdin, or a signal, ends the session.
      process.stdin.once('end', () => {
        void (async () => {
          // A request read just before the end starts its call on a later turn: give it that turn.
          await new Promise((r) => setImmediate(r));
          while (inflight.size) await Promise.allSettled([...inflight]);
          // The answers are written after their calls settle: let them reach stdout first.
          await new Promise((r) => setImmediate(r));
          await server.close();
        })();
      });
      void io.onStop().then(() => server.close());
      await closed;
    } finally {
      await ctx?.store.close();
    }
  });
  return cmd;
}

/** Locally, the user of the operations that are per user (training runs): --user, else none (those tools then say so). */
async function localPrincipal(op: Operation, user: string | undefined): Promise<Principal | undefined> {
  if (op.access !== 'user' || user === undefined) return undefined;
  const [{ assertUserId }, { DEFAULT_SCOPES }] = await Promise.all([import('../../core/keys/key-store.ts'), import('../../core/keys/scopes.ts')]);
  try {
    assertUserId(user);
  } catch (err) {
    throw new EstateError('usage', `--user: ${(err as Error).message}`);
  }
  return { userId: user, keyId: 'local', scopes: DEFAULT_SCOPES };
}
