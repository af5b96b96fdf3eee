import { Command } from 'commander';
import type { CliIO } from '../io.ts';

/** `estate openapi`: the document `/api/openapi.json` serves, built from the same table, without a server. */
export function openapiCommand(io: CliIO): Command {
  return new Command('openapi')
    .description('Print the OpenAPI 3.1 document of the HTTP API (the one /api/openapi.json serves), without starting a server')
    .option('--compact', 'print it on one line')
    .addHelpText('after', '\nExamples:\n  $ estate openapi > openapi.json\n  $ estate openapi | jq ".paths | keys"\n')
    .action(async (options: { compact?: boolean }) => {
      // Loaded here, not at start-up: only this command needs the generator.
      const [{ buildOpenApi }, { operations }, { PAGE_ROUTE_DOCS }] = await Promise.all([
        import('../../api/openapi.ts'),
        import('../../api/operations/index.ts'),
        import('../../server/docs-routes.ts'),
      ]);
      io.stdout(`${JSON.stringify(buildOpenApi(operations, PAGE_ROUTE_DOCS), null, options.compact ? undefined : 2)}\n`);
    });
}
