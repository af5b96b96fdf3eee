import { Option, type Command } from 'commander';
import { addOutputOptions, type FieldsExample, type Format } from './output/output-options.ts';

// The options commands share. Light on purpose: every command line builds
// them, before it knows whether it needs a data dir (local-context.ts).

export interface CommonOptions {
  dataDir?: string;
  config?: string;
  /** `--store`: see resolveStoreSpec in config.ts. */
  store?: string;
  /** `true` for `--json`, the field list for `--json FIELDS` (output/output-options.ts). */
  json?: boolean | string;
  output?: Format;
  headers?: boolean;
  url?: string;
  apiKey?: string;
  context?: string;
  debug?: boolean;
}

/** The one description of `--data-dir <dir>`, wherever a command takes it (`estate init` excepted: it creates one). */
export const DATA_DIR_OPTION_TEXT = 'the data directory (default: $ESTATE_DATA_DIR, else $XDG_DATA_HOME/estate)';

export function addDataDirOptions(cmd: Command): Command {
  return cmd
    .option('--data-dir <dir>', DATA_DIR_OPTION_TEXT)
    .option('--config <file>', 'the config file (default: estate.config.json in the data dir)')
    .option('--store <url>', 'where estate keeps what it writes: a postgres:// URL, or data-dir (default: $ESTATE_STORE, else the config\'s store, else the data dir)');
}

/** Options every operation command takes; `example` names two fields of its answer, for `--json`'s help. */
export function addCommonOptions(cmd: Command, example?: FieldsExample): Command {
  addRemoteOptions(addOutputOptions(addDataDirOptions(cmd), example));
  return cmd.addOption(new Option('--debug', 'print stack traces of errors').hideHelp(false));
}

/** `--url`, `--api-key` and `--context`: call a server instead of the local data dir (resolveTarget). */
export function addRemoteOptions(cmd: Command): Command {
  return cmd
    .option('--url <url>', 'call this estate server instead of the local data dir (default: $ESTATE_URL)')
    .option('--api-key <key>', 'credential for --url (default: $ESTATE_API_KEY)')
    .option('--context <name>', 'call the server of this context (see estate context; default: $ESTATE_CONTEXT, else the current one)');
}
