import { Command } from 'commander';
import { parseDuration } from '../../core/duration.ts';
import { parseScopes, TOKEN_SCOPES } from '../../core/keys/scopes.ts';
import { addDataDirOptions } from '../common-options.ts';
import { withLocalContext } from '../local-context.ts';
import type { CliIO } from '../io.ts';

interface CreateOptions {
  user: string;
  ttl: string;
  scope?: string;
  json?: boolean;
  dataDir?: string;
  config?: string;
  store?: string;
}

export function tokenCommand(io: CliIO): Command {
  const token = new Command('token').description('Issue signed, expiring bearer access tokens (for dashboards and short jobs)');

  const create = new Command('create')
    .description('Print a signed access token for a user, valid until it expires (it cannot be revoked alone)')
    .requiredOption('--user <user>', 'the user the token acts as')
    .option('--ttl <duration>', 'how long the token lives: 30s, 15m, 1h, 7d (at most 30d)', '1h')
    .option('--scope <scopes>', 'read, write or read,write (default: read,write)')
    .option('--json', 'print {"token","user_id","expires_at"}')
    .addHelpText(
      'after',
      '\nExamples:\n  $ estate token create --user dashboard --scope read --ttl 12h\n  $ curl -H "Authorization: Bearer $(estate token create --user alice --ttl 15m)" http://127.0.0.1:8080/trends\n',
    )
    .action(async (options: CreateOptions) => {
      // jose loads only for this command.
      const { createToken, MAX_TOKEN_TTL_MS } = await import('../../core/keys/tokens.ts');
      const ttlMs = parseDuration(options.ttl, '--ttl', MAX_TOKEN_TTL_MS);
      const scopes = options.scope === undefined ? undefined : parseScopes(options.scope, '--scope', TOKEN_SCOPES);
      const issued = await withLocalContext(options, io, (ctx) => createToken(ctx.store.tokenSecret, { userId: options.user, ttlMs, scopes }));
      if (options.json) io.stdout(`${JSON.stringify({ token: issued.token, user_id: issued.user_id, expires_at: issued.expires_at }, null, 2)}\n`);
      else {
        io.stdout(`${issued.token}\n`);
        io.stderr(`token for user ${issued.user_id} (${issued.scopes.join(',')}) expires at ${issued.expires_at}\n`);
      }
    });

  token.addCommand(addDataDirOptions(create));
  return token;
}
