import { Command } from 'commander';
import { createKey, listKeys, revokeKey } from '../../core/keys/key-store.ts';
import { EstateError } from '../../errors.ts';
import { addDataDirOptions, localContext } from '../common-options.ts';
import type { CliIO } from '../io.ts';

type Print = (body: unknown, options: { json?: boolean }, columns?: string[]) => void;

export function keysCommand(io: CliIO, print: Print): Command {
  const keys = new Command('keys').description('Create, list and revoke API keys (only their hashes are stored)');

  const create = new Command('create')
    .description('Create an API key for a user and print it once')
    .requiredOption('--user <user>', 'the user the key acts as')
    .option('--name <label>', 'a label to recognise the key by')
    .option('--json', 'print {"key_id","user_id","key"}')
    .addHelpText('after', '\nExamples:\n  $ estate keys create --user alice --name laptop\n  $ estate keys create --user cron --json\n')
    .action(async (options: { user: string; name?: string; json?: boolean; dataDir?: string; config?: string }) => {
      const { dataDir } = localContext(options, io);
      const { info, key } = await createKey(dataDir, { userId: options.user, name: options.name });
      if (options.json) io.stdout(`${JSON.stringify({ key_id: info.key_id, user_id: info.user_id, key }, null, 2)}\n`);
      else io.stdout(`${key}\nkey ${info.key_id} for user ${info.user_id} created; it is shown only once, store it now\n`);
    });

  const list = new Command('list')
    .description('List keys (never their secrets)')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExamples:\n  $ estate keys list\n')
    .action((options: { json?: boolean; dataDir?: string; config?: string }) => {
      const items = listKeys(localContext(options, io).dataDir);
      print({ items, count: items.length }, options, ['key_id', 'user_id', 'name', 'scopes', 'created_at', 'expires_at', 'revoked_at']);
    });

  const revoke = new Command('revoke')
    .description('Revoke a key; a running server refuses it from the next request on')
    .argument('<key_id>', 'the id shown by `estate keys list`')
    .option('--json', 'print the revoked key as JSON')
    .addHelpText('after', '\nExamples:\n  $ estate keys revoke 3f9a1c2b7d4e\n')
    .action(async (keyId: string, options: { json?: boolean; dataDir?: string; config?: string }) => {
      const info = await revokeKey(localContext(options, io).dataDir, keyId);
      if (!info) throw new EstateError('not_found', `no key with id ${keyId}`);
      print(info, options);
    });

  for (const cmd of [create, list, revoke]) keys.addCommand(addDataDirOptions(cmd));
  return keys;
}
