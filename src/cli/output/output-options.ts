import { type Command, Option } from 'commander';
import { EstateError } from '../../errors.ts';
import { parseFields } from './select-fields.ts';

// The output options of every read command, in the spirit of gh and kubectl:
// `--json` (the exact HTTP body), `--json FIELD,FIELD` (only those fields),
// `-o json|yaml|tsv|csv|table|wide` and `--no-headers`. Without them a
// terminal gets a table and a pipe gets TSV.

export const FORMATS = ['json', 'yaml', 'tsv', 'csv', 'table', 'wide'] as const;
export type Format = (typeof FORMATS)[number];

export interface OutputOptions {
  /** `true` for `--json`, the field list for `--json FIELDS`. */
  json?: boolean | string;
  output?: Format;
  /** false with `--no-headers`. */
  headers?: boolean;
}

/** What to print, decided from the options and whether stdout is a terminal. */
export interface OutputChoice {
  format: Format;
  /** `--json FIELDS`: only these fields. */
  fields?: string[] | undefined;
  headers: boolean;
}

/** The flags of `--json`, as every read command takes it. */
export const JSON_FIELDS_FLAGS = '--json [fields]';

/** Two fields of a command's answer, for its `--json` help: of its items (a list), or of the answer itself (an object). */
export interface FieldsExample {
  fields: readonly string[];
  ofItems: boolean;
}

/**
 * What `--json [fields]` says, with the command's own fields when it has any
 * (`…; with FIELDS (task_id,board), only those fields of each item`); without
 * an example, as the program's global option says it.
 */
export function jsonOptionText(example?: FieldsExample): string {
  const named = example?.fields.length ? ` (${example.fields.join(',')})` : '';
  const of = example === undefined ? ' (of each item, for a list)' : example.ofItems ? ' of each item' : '';
  return `print the JSON body the HTTP API returns; with FIELDS${named}, only those fields${of}`;
}

/** Adds --json [fields], -o/--output and --no-headers to `cmd`; `example` names two fields of its answer. */
export function addOutputOptions(cmd: Command, example?: FieldsExample): Command {
  cmd
    .option(JSON_FIELDS_FLAGS, jsonOptionText(example))
    .addOption(new Option('-o, --output <format>', 'print as json, yaml, tsv, csv, table or wide (default: table on a terminal, else tsv)').choices(FORMATS))
    .option('--no-headers', 'leave out the header line of tables, TSV and CSV');
  keepArgumentsFromJson(cmd);
  return cmd;
}

/**
 * `--json` takes an optional value, so `estate state --json heartbeat` would
 * read `heartbeat` as fields. A command still short of positional arguments
 * takes a value without a comma, given as `--json VALUE` (not `--json=VALUE`),
 * as its argument instead.
 */
function keepArgumentsFromJson(cmd: Command): void {
  const parseOptions = cmd.parseOptions.bind(cmd);
  cmd.parseOptions = (argv: string[]) => {
    const parsed = parseOptions(argv);
    const value: unknown = cmd.getOptionValue('json');
    const at = argv.lastIndexOf('--json');
    if (typeof value !== 'string' || value.includes(',') || at < 0 || argv[at + 1] !== value) return parsed;
    if (parsed.operands.length >= cmd.registeredArguments.length) return parsed;
    const before = argv.slice(0, at).filter((a) => parsed.operands.includes(a)).length;
    parsed.operands.splice(Math.min(before, parsed.operands.length), 0, value);
    cmd.setOptionValueWithSource('json', true, 'cli');
    return parsed;
  };
}

/** The format asked for: `--json` with `-o` other than json is a usage error. */
export function chooseOutput(options: OutputOptions, isTTY: boolean): OutputChoice {
  const headers = options.headers !== false;
  if (options.json !== undefined && options.json !== false) {
    if (options.output && options.output !== 'json') throw new EstateError('usage', `--json and -o ${options.output} ask for two formats: give one`);
    return { format: 'json', fields: typeof options.json === 'string' ? parseFields(options.json) : undefined, headers };
  }
  return { format: options.output ?? (isTTY ? 'table' : 'tsv'), headers };
}
