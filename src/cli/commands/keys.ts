import { Command } from 'commander';
import { parseDuration } from '../../core/duration.ts';
import type { KeyInfo } from '../../core/keys/key-store.ts';
import { parseScopes } from '../../core/keys/scopes.ts';
import { EstateError } from '../../errors.ts';
import { addDataDirOptions } from '../common-options.ts';
import { withLocalContext } from '../local-context.ts';
import type { CliIO } from '../io.ts';
import { addOutputOptions, type OutputOptions } from '../output/output-options.ts';

type Print = (body: unknown, options: OutputOptions, columns?: string[]) => void | Promise<void>;

interface CreateOptions {
  user: string;
  name?: string;
  scope?: string;
  node?: string;
  expires?: string;
  json?: boolean;
  dataDir?: string;
  config?: string;
  store?: string;
}

const LIST_COLUMNS = ['key_id', 'user_id', 'name', 'scopes', 'node', 'status', 'created_at', 'expires_at', 'last_used_at', 'revoked_at'];

/** `active`, `expired` or `revoked`, as a running server would treat the key now. */
export function keyStatus(key: KeyInfo, now: Date): 'active' | 'expired' | 'revoked' {
  if (key.revoked_at) return 'revoked';
  if (key.expires_at && Date.parse(key.expires_at) <= now.getTime()) return 'expired';
  return 'active';
}

export function keysCommand(io: CliIO, print: Print): Command {
  const keys = new Command('keys').description('Create, list and revoke API keys (only their hashes are stored)');

  const create = new Command('create')
    .description('Create an API key for a user and print it once (only the key on stdout; the notice on stderr)')
    .requiredOption('--user <user>', 'the user the key acts as')
    .option('--name <label>', 'a label to recognise the key by')
    .option('--scope <scopes>', 'read, write, ingest, metrics, or a list like read,write (default: read,write); ingest opens only POST /ingest, which write opens too; metrics only GET /metrics, which read opens too')
    .option('--node <name>', 'with --scope ingest: the key may send only the samples of this node (default: any node)')
    .option('--expires <duration>', 'the key stops working after this long: 30s, 15m, 1h, 7d (default: never)')
    .option('--json', 'print {"key_id","user_id","key","scopes","expires_at"} (and "node" for a key bound to one)')
    .addHelpText(
      'after',
      '\nExamples:\n  $ estate keys create --user alice --name laptop\n  $ estate keys create --user cron --scope write --expires 90d --json\n  $ estate keys create --user grafana --scope read --name dashboard\n  $ estate keys create --user web-1 --scope ingest --node web-1 --name collector\n  $ estate keys create --user prometheus --scope metrics --name scraper\n',
    )
    .action(async (options: CreateOptions) => {
      const scopes = options.scope === undefined ? undefined : parseScopes(options.scope);
      if (options.node !== undefined && !scopes?.includes('ingest')) throw new EstateError('usage', '--node needs --scope ingest: only an ingest key is bound to a node');
      const now = new Date();
      const expiresAt = options.expires === undefined ? undefined : new Date(now.getTime() + parseDuration(options.expires, '--expires'));
      const { info, key } = await withLocalContext(options, io, (ctx) => ctx.store.credentials.create({ userId: options.user, name: options.name, scopes, node: options.node, expiresAt, now }));
      if (options.json) {
        const body = { key_id: info.key_id, user_id: info.user_id, key, scopes: info.scopes, expires_at: info.expires_at, ...(info.node === null ? {} : { node: info.node }) };
        io.stdout(`${JSON.stringify(body, null, 2)}\n`);
      } else {
        const expiry = info.expires_at ? `, expires ${info.expires_at}` : '';
        const node = info.node === null ? '' : ` for node ${info.node}`;
        // Only the key on stdout, so that KEY=$(estate keys create --user cron) works.
        io.stdout(`${key}\n`);
        io.stderr(`key ${info.key_id} for user ${info.user_id} (${info.scopes.join(',')}${node}${expiry}) created; it is shown only once, store it now\n`);
      }
    });

  const list = addOutputOptions(new Command('list').description('List keys with their user, label, scopes, node (ingest keys), status, creation, expiry, last use and revocation (never their secrets)'), { fields: LIST_COLUMNS.slice(0, 2), ofItems: true })
    .addHelpText('after', '\nExamples:\n  $ estate keys list\n  $ estate keys list --json\n')
    .action(async (options: OutputOptions & { dataDir?: string; config?: string; store?: string }) => {
      const now = new Date();
      const items = (await withLocalContext(options, io, (ctx) => ctx.store.credentials.list())).map((k) => ({ ...k, status: keyStatus(k, now) }));
      await print({ items, count: items.length }, options, LIST_COLUMNS);
    });

  const revoke = new Command('revoke')
    .description('Revoke a key; a running server refuses it from its next request, with no restart')
    .argument('<key_id>', 'the id shown by `estate keys list`')
    .option('--json', 'print the revoked key as JSON')
    .addHelpText('after', '\nExamples:\n  $ estate keys revoke 3f9a1c2b7d4e\n')
    .action(async (keyId: string, options: { json?: boolean; dataDir?: string; config?: string; store?: string }) => {
      const info = await withLocalContext(options, io, (ctx) => ctx.store.credentials.revoke(keyId, new Date()));
      if (!info) throw new EstateError('not_found', `no key with id ${keyId}`);
      await print(info, options);
    });

  for (const cmd of [create, list, revoke]) keys.addCommand(addDataDirOptions(cmd));
  return keys;
}
