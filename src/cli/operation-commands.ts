import { Command, Option } from 'commander';
import type { z } from 'zod';
import type { Operation } from '../api/define-operation.ts';
import type { RawInput } from '../api/parse-input.ts';
import { runOperation, type OperationResult } from '../api/run-operation.ts';
import { addCommonOptions, type CommonOptions, localContext, remoteTarget } from './common-options.ts';
import type { CliIO } from './io.ts';
import { remoteCall } from './remote-call.ts';

/** `max_chars` → `--max-chars`. */
export function optionFlag(field: string): string {
  return `--${field.replace(/_/g, '-')}`;
}

/** `max_chars` → `maxChars`, as commander names the parsed option. */
function optionKey(field: string): string {
  return field.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

interface Node {
  command: Command;
  /** Operations run by this command, by how many positional arguments they take. */
  variants: Map<number, Operation>;
}

/**
 * Adds one subcommand per operation (`cli.command` words, path parameters as
 * positional arguments, query and body fields as options) under `program`.
 * Each runs the operation locally against the data dir, or remotely with --url.
 */
export function addOperationCommands(program: Command, ops: readonly Operation[], io: CliIO, print: (op: Operation, result: OperationResult, options: CommonOptions) => void): void {
  const nodes = new Map<string, Node>();
  const nodeFor = (words: string[]): Node => {
    const key = words.join(' ');
    let node = nodes.get(key);
    if (node) return node;
    const parent = words.length > 1 ? nodeFor(words.slice(0, -1)).command : program;
    const command = parent.command(words.at(-1) as string);
    node = { command, variants: new Map() };
    nodes.set(key, node);
    return node;
  };

  for (const op of ops) {
    if (op.cli) nodeFor(op.cli.command.split(' ')).variants.set(op.cli.args?.length ?? 0, op);
  }

  for (const node of nodes.values()) {
    if (!node.variants.size) continue;
    const variants = [...node.variants.entries()].sort(([a], [b]) => a - b);
    const [fewest] = variants[0] as [number, Operation];
    const [most, widest] = variants.at(-1) as [number, Operation];
    const cmd = node.command;
    const main = node.variants.get(fewest) as Operation;
    cmd.description(variants.map(([, op]) => op.summary).join('; or, with an argument: '));
    (widest.cli ? (widest.cli.args ?? []) : []).forEach((arg, i) => {
      const required = i < fewest;
      const desc = describe(widest.input.path?.shape[arg]);
      cmd.argument(required ? `<${arg}>` : `[${arg}]`, desc);
    });
    const fields = new Map<string, z.ZodType>();
    for (const [, op] of variants) {
      for (const [k, v] of Object.entries(op.input.query?.shape ?? {})) fields.set(k, v as z.ZodType);
      for (const [k, v] of Object.entries(op.input.body?.shape ?? {})) fields.set(k, v as z.ZodType);
    }
    for (const [field, schema] of fields) {
      const fallback = defaultOf(schema);
      const text = [describe(schema), fallback === undefined ? '' : `(default: ${String(fallback)})`].filter(Boolean).join(' ');
      cmd.addOption(new Option(`${optionFlag(field)} <value>`, text));
    }
    addCommonOptions(cmd);
    const examples = variants.flatMap(([, op]) => (op.cli ? op.cli.examples : []));
    cmd.addHelpText('after', `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n`);
    cmd.action(async (...args: unknown[]) => {
      const positional = args.slice(0, most).filter((a): a is string => typeof a === 'string');
      const options = (args[most] ?? {}) as CommonOptions & Record<string, string | undefined>;
      const op = node.variants.get(positional.length) ?? main;
      const raw = rawInput(op, positional, options);
      const target = remoteTarget(options, io);
      const result = target ? await remoteCall(op, target, raw) : await runOperation(op, localContext(options, io), raw, undefined);
      print(op, result, options);
    });
  }
}

function rawInput(op: Operation, positional: string[], options: Record<string, unknown>): RawInput {
  const path: Record<string, string> = {};
  (op.cli ? (op.cli.args ?? []) : []).forEach((arg, i) => {
    if (positional[i] !== undefined) path[arg] = positional[i];
  });
  const query: Record<string, string | undefined> = {};
  for (const field of Object.keys(op.input.query?.shape ?? {})) {
    const value = options[optionKey(field)];
    if (typeof value === 'string') query[field] = value;
  }
  let body: Record<string, unknown> | undefined;
  if (op.input.body) {
    body = {};
    for (const field of Object.keys(op.input.body.shape)) {
      const value = options[optionKey(field)];
      if (typeof value === 'string') body[field] = value;
    }
  }
  return { path, query, body };
}

function describe(schema: z.ZodType | undefined): string {
  const meta = schema?.meta() as { description?: string } | undefined;
  return meta?.description ?? '';
}

function defaultOf(schema: z.ZodType): unknown {
  const def = schema._zod.def as { type: string; defaultValue?: unknown };
  return def.type === 'default' ? def.defaultValue : undefined;
}
