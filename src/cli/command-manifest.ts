import type { z } from 'zod';
import type { Operation } from '../api/define-operation.ts';
import { exitCodesHelp } from './exit-status.ts';
import type { FieldsExample } from './output/output-options.ts';
import { optionFlag } from './option-names.ts';

// What commander needs to build the operation commands (names, arguments,
// options, descriptions, help), as plain data worked out from the operations
// table. The bundle carries it ready-made (scripts/build.mjs), so a command
// line builds its commands without building any operation's schemas, and
// runs only the operation it names (operation-manifest.ts).

/** One command of the tree under `estate`, parents before their subcommands. */
export interface ManifestCommand {
  /** The words after `estate`: `['work', 'feed']`. */
  words: string[];
  /** What the command runs; absent for a group that only holds commands (`work`). */
  run?: ManifestRun;
}

export interface ManifestRun {
  description: string;
  /** Positional arguments: `<file_name>` (required) or `[file_name]`, with their descriptions. */
  arguments: { syntax: string; description: string }[];
  /** The query and body fields, as options: `--max-chars <value>`. */
  options: { flags: string; description: string; mandatory: boolean }[];
  /** Some operation of the command acts as a user: it takes `--user`. */
  user: boolean;
  /** The command takes `--watch` and `--interval`. */
  watch: boolean;
  /** The `Exit status:` paragraph of its help, or ''. */
  exitCodesHelp: string;
  /** The exit status of every error of the command (`pulse status`: 3), if it has one. */
  errorExitCode?: number;
  examples: string[];
  /** The operation ids it runs, by how many positional arguments they take, fewest first. */
  variants: [number, string][];
  /** What `--json FIELDS` picks from its answer, for its help (output-options.ts): two of the fields. */
  jsonFields: FieldsExample;
}

/**
 * The operation commands of `ops`: one per `cli.command` (operations that
 * share one differ by argument count: `state` / `state NAME`), path
 * parameters as positional arguments, query and body fields as options.
 */
export function commandManifest(ops: readonly Operation[]): ManifestCommand[] {
  const nodes = new Map<string, { words: string[]; variants: Map<number, Operation> }>();
  const nodeFor = (words: string[]): Map<number, Operation> => {
    const key = words.join(' ');
    let node = nodes.get(key);
    if (!node) {
      if (words.length > 1) nodeFor(words.slice(0, -1));
      node = { words, variants: new Map() };
      nodes.set(key, node);
    }
    return node.variants;
  };
  for (const op of ops) {
    if (op.cli) nodeFor(op.cli.command.split(' ')).set(op.cli.args?.length ?? 0, op);
  }
  return [...nodes.values()].map(({ words, variants }) => (variants.size ? { words, run: manifestRun(variants) } : { words }));
}

function manifestRun(byArgs: Map<number, Operation>): ManifestRun {
  const variants = [...byArgs.entries()].sort(([a], [b]) => a - b);
  const [fewest, main] = variants[0] as [number, Operation];
  const [, widest] = variants.at(-1) as [number, Operation];
  const cli = (op: Operation) => (op.cli ? op.cli : undefined);
  const args = (cli(widest)?.args ?? []).map((arg, i) => ({
    syntax: i < fewest ? `<${arg}>` : `[${arg}]`,
    description: arg
      .split('/')
      .map((name) => describe(widest.input.path?.shape[name]))
      .filter(Boolean)
      .join(' '),
  }));
  const fields = new Map<string, z.ZodType>();
  for (const [, op] of variants) {
    for (const [k, v] of Object.entries(op.input.query?.shape ?? {})) fields.set(k, v as z.ZodType);
    for (const [k, v] of Object.entries(op.input.body?.shape ?? {})) fields.set(k, v as z.ZodType);
  }
  const options = [...fields].map(([field, schema]) => {
    const fallback = defaultOf(schema);
    return {
      flags: `${optionFlag(field)} <value>`,
      description: [describe(schema), fallback === undefined ? '' : `(default: ${String(fallback)})`].filter(Boolean).join(' '),
      // Required when every variant needs it; help-text.ts checks them all at once ("missing --a, --b").
      mandatory: variants.every(([, op]) => isRequired(op.input.body?.shape[field] ?? op.input.query?.shape[field])),
    };
  });
  const errorExitCode = cli(main)?.errorExitCode;
  return {
    description: variants.map(([, op], i) => (i ? op.summary.charAt(0).toLowerCase() + op.summary.slice(1) : op.summary)).join('; or, with an argument: '),
    arguments: args,
    options,
    user: variants.some(([, op]) => op.access === 'user'),
    watch: Boolean(cli(main)?.watch),
    exitCodesHelp: exitCodesHelp(main),
    ...(errorExitCode === undefined ? {} : { errorExitCode }),
    examples: variants.flatMap(([, op]) => cli(op)?.examples ?? []),
    variants: variants.map(([count, op]) => [count, op.id]),
    jsonFields: jsonFields(main.output),
  };
}

/**
 * The first two fields (an `id` passed over) of the items of a list answer
 * (`{items: [...]}` or an array) or else of an object answer: what
 * `--json FIELDS` picks from (select-fields.ts).
 */
export function jsonFields(output: z.ZodType): FieldsExample {
  const shape = objectShape(output);
  const items = shape?.items ?? (kind(output) === 'array' ? output : undefined);
  const itemShape = items && kind(items) === 'array' ? objectShape((items._zod.def as unknown as { element: z.ZodType }).element) : undefined;
  const fields = Object.keys(itemShape ?? shape ?? {}).filter((f) => f !== 'id').slice(0, 2);
  return { fields, ofItems: itemShape !== undefined };
}

function kind(schema: z.ZodType): string {
  return (schema._zod.def as { type: string }).type;
}

/** The fields of an object schema (through optional, nullable and pipes), or undefined. */
function objectShape(schema: z.ZodType): Record<string, z.ZodType> | undefined {
  const def = schema._zod.def as { type: string; shape?: Record<string, z.ZodType>; innerType?: z.ZodType; in?: z.ZodType };
  if (def.type === 'object') return def.shape;
  const inner = def.innerType ?? (def.type === 'pipe' ? def.in : undefined);
  return inner ? objectShape(inner) : undefined;
}

/** A field the input must have: absent, it is 422 `missing`. */
function isRequired(schema: z.ZodType | undefined): boolean {
  return schema !== undefined && !schema.safeParse(undefined).success;
}

function describe(schema: z.ZodType | undefined): string {
  const meta = schema?.meta() as { description?: string } | undefined;
  return meta?.description ?? '';
}

function defaultOf(schema: z.ZodType): unknown {
  const def = schema._zod.def as { type: string; defaultValue?: unknown };
  return def.type === 'default' ? def.defaultValue : undefined;
}
