import path from 'node:path';
import { Command, Option } from 'commander';
import { envSettings } from '../../config.ts';
import { EstateError } from '../../errors.ts';
import {
  assertContextName,
  type ContextEntry,
  type ContextsFile,
  contextsFilePath,
  credentialSource,
  readContextsFile,
  writeContextsFile,
} from '../contexts-file.ts';
import type { CliIO } from '../io.ts';
import { checkServerUrl } from '../resolve-target.ts';

type Print = (body: unknown, options: { json?: boolean }, columns?: string[]) => void | Promise<void>;

const COLUMNS = ['name', 'current', 'url', 'credential'];

interface SetOptions {
  url?: string;
  apiKeyEnv?: string;
  apiKeyFile?: string;
}

/** `estate context`: the named servers of the user's contexts file (src/cli/contexts-file.ts). */
export function contextCommand(io: CliIO, print: Print): Command {
  const file = () => contextsFilePath(io.env);
  const describe = (name: string, entry: ContextEntry, contexts: ContextsFile) => ({
    name,
    current: contexts.current === name,
    url: entry.url,
    credential: credentialSource(entry),
  });
  const find = (contexts: ContextsFile, name: string): ContextEntry => {
    const entry = contexts.contexts[name];
    if (!entry) throw new EstateError('not_found', `no context named "${name.slice(0, 80)}" in ${file()}; see estate context list`);
    return entry;
  };

  const group = new Command('context')
    .description('Name remote servers with their URL and credential source, and pick the one commands call (like kubectl contexts)')
    .addHelpText(
      'after',
      `
Contexts live in $XDG_CONFIG_HOME/estate/contexts.json (~/.config/estate/contexts.json),
written with mode 0600; estate refuses the file when others may read it and it
names a credential. A command calls a context's server with --context NAME,
$ESTATE_CONTEXT, or the current context; --url, --data-dir and their variables
come first (flags, then environment, then the contexts file).

Examples:
  $ estate context set hub --url https://hub.example.org --api-key-env HUB_KEY
  $ estate context set lab --url http://lab:8080 --api-key-file ~/.config/estate/lab.key
  $ estate context use hub && estate trends
  $ estate events --context lab
`,
    );

  group.addCommand(
    new Command('list')
      .description('List the contexts: name, whether current, URL and where the credential comes from (never the key)')
      .option('--json', 'print {"items": [{name, current, url, credential}], "count", "current"}')
      .addHelpText('after', '\nExamples:\n  $ estate context list\n  $ estate context list --json\n')
      .action(async (options: { json?: boolean }) => {
        const contexts = readContextsFile(file());
        const items = Object.entries(contexts.contexts).map(([name, entry]) => describe(name, entry, contexts));
        await print({ items, count: items.length, current: contexts.current ?? null }, options, COLUMNS);
      }),
  );

  group.addCommand(
    new Command('show')
      .description('Show one context (default: $ESTATE_CONTEXT, else the current one)')
      .argument('[name]', 'the context')
      .option('--json', 'print {name, current, url, credential}')
      .addHelpText('after', '\nExamples:\n  $ estate context show\n  $ estate context show hub --json\n')
      .action(async (given: string | undefined, options: { json?: boolean }) => {
        const contexts = readContextsFile(file());
        const name = given ?? envSettings(io.env).context ?? contexts.current;
        if (name === undefined) throw new EstateError('usage', 'no context is current: name one, or pick one with estate context use NAME');
        await print(describe(name, find(contexts, name), contexts), options);
      }),
  );

  group.addCommand(
    new Command('use')
      .description('Make a context the current one: commands call its server unless told otherwise')
      .argument('[name]', 'the context')
      .option('--none', 'have no current context: commands use the local data dir again')
      .addHelpText('after', '\nExamples:\n  $ estate context use hub\n  $ estate context use --none\n')
      .action(async (name: string | undefined, options: { none?: boolean }) => {
        if ((name === undefined) === !options.none) throw new EstateError('usage', 'give a context name, or --none');
        const contexts = readContextsFile(file());
        if (name === undefined) delete contexts.current;
        else {
          find(contexts, name);
          contexts.current = name;
        }
        await writeContextsFile(file(), contexts);
        io.stderr(name === undefined ? 'no current context: commands use the local data dir\n' : `current context: ${name}\n`);
      }),
  );

  group.addCommand(
    new Command('set')
      .description('Add a context, or change the URL or credential source of one')
      .argument('<name>', 'the context')
      .option('--url <url>', 'the server (required for a new context)')
      .addOption(new Option('--api-key-env <var>', 'take the API key from this environment variable').conflicts('apiKeyFile'))
      .option('--api-key-file <file>', 'take the API key from this file (mode 0600)')
      .addHelpText(
        'after',
        '\nExamples:\n  $ estate context set hub --url https://hub.example.org --api-key-env HUB_KEY\n  $ estate context set lab --url http://lab:8080 --api-key-file ~/.config/estate/lab.key\n',
      )
      .action(async (name: string, options: SetOptions) => {
        assertContextName(name);
        const contexts = readContextsFile(file());
        const before = contexts.contexts[name];
        const url = options.url ?? before?.url;
        if (url === undefined) throw new EstateError('usage', `context ${name} is new: give its --url`);
        checkServerUrl(url, '--url');
        let entry: ContextEntry = { ...before, url };
        if (options.apiKeyEnv !== undefined) {
          if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(options.apiKeyEnv)) throw new EstateError('usage', '--api-key-env must be an environment variable name: letters, digits and underscores, not starting with a digit');
          entry = { url, api_key_env: options.apiKeyEnv };
        } else if (options.apiKeyFile !== undefined) {
          const keyFile = options.apiKeyFile.startsWith('~/') ? options.apiKeyFile : path.resolve(options.apiKeyFile);
          entry = { url, api_key_file: keyFile };
        }
        contexts.contexts[name] = entry;
        await writeContextsFile(file(), contexts);
        const hint = contexts.current === name ? '' : ` (use it with --context ${name}, or make it current: estate context use ${name})`;
        io.stderr(`context ${name} ${before ? 'changed' : 'added'}: ${url}, credential ${credentialSource(entry)}${hint}\n`);
      }),
  );

  group.addCommand(
    new Command('delete')
      .description('Remove a context (and its inline key, if it has one)')
      .argument('<name>', 'the context')
      .addHelpText('after', '\nExamples:\n  $ estate context delete lab\n')
      .action(async (name: string) => {
        const contexts = readContextsFile(file());
        find(contexts, name);
        delete contexts.contexts[name];
        if (contexts.current === name) delete contexts.current;
        await writeContextsFile(file(), contexts);
        io.stderr(`context ${name} deleted\n`);
      }),
  );
  return group;
}
