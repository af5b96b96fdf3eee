import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, type Stats } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { isNotFound } from '../core/fs-errors.ts';
import { EstateError } from '../errors.ts';

// Named remote servers ("contexts"), as kubectl contexts and gh hosts: the
// user's `$XDG_CONFIG_HOME/estate/contexts.json` (`~/.config/estate/…`):
//
//   {"current": "hub",
//    "contexts": {"hub": {"url": "https://hub.example.org", "api_key_env": "HUB_KEY"},
//                 "lab": {"url": "http://lab:8080", "api_key_file": "~/.config/estate/lab.key"},
//                 "old": {"url": "http://old:8080", "api_key": "est_…"}}}
//
// A context has at most one credential source: `api_key_env` (the name of an
// environment variable), `api_key_file` (a file holding the key; `~/` is the
// home folder, a relative path is relative to contexts.json) or `api_key`
// (the key itself). Like ssh with its config, estate refuses the file when
// it is not the user's own, when others may write it (they could point a
// key at their server), and when it has a credential source and group or
// others may read it (mode 0600 or stricter). A key file is held to the
// same 0600. estate writes the file with mode 0600, atomically.

export const CONTEXTS_FILE_NAME = 'contexts.json';

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
export const CONTEXT_NAME_RULE = 'a context name: letters, digits, dots, underscores and hyphens (at most 63), starting with a letter or digit';
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The contexts file's schema; built when a file is read (most command lines find none). */
function contextsFileSchema() {
  const context = z
    .strictObject({
      url: z.string().min(1).max(2048),
      api_key_env: z.string().regex(ENV_NAME, { message: 'must be an environment variable name (letters, digits, underscores)' }).optional(),
      api_key_file: z.string().min(1).max(4096).optional(),
      api_key: z.string().min(1).max(4096).optional(),
    })
    .refine((c) => [c.api_key_env, c.api_key_file, c.api_key].filter((v) => v !== undefined).length <= 1, {
      message: 'has more than one of api_key_env, api_key_file and api_key: keep one',
    });
  return z.strictObject({
    current: z.string().optional(),
    contexts: z.record(z.string().regex(NAME, { message: CONTEXT_NAME_RULE }), context).default({}),
  });
}

let fileSchema: ReturnType<typeof contextsFileSchema> | undefined;

export type ContextsFile = z.output<ReturnType<typeof contextsFileSchema>>;
export type ContextEntry = ContextsFile['contexts'][string];

/** `$XDG_CONFIG_HOME/estate/contexts.json` (an absolute XDG_CONFIG_HOME only), else `~/.config/estate/contexts.json`. */
export function contextsFilePath(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(homeOf(env), '.config');
  return path.join(xdg, 'estate', CONTEXTS_FILE_NAME);
}

export function assertContextName(name: string): void {
  if (!NAME.test(name)) throw new EstateError('usage', `"${name.slice(0, 80)}" is not ${CONTEXT_NAME_RULE}`);
}

/** The contexts file, checked (see above); an empty one when there is none. */
export function readContextsFile(file: string): ContextsFile {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if (isNotFound(err)) return { contexts: {} };
    throw new EstateError('usage', `cannot read ${file}: ${(err as Error).message}`);
  }
  let text: string;
  let stats: Stats;
  try {
    stats = fstatSync(fd);
    text = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  assertPrivate(file, stats, 'the contexts file');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new EstateError('usage', `${file} is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = (fileSchema ??= contextsFileSchema()).safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.map(String).join('.') || '(top level)'}: ${i.code === 'unrecognized_keys' ? `unknown key ${i.keys.join(', ')}` : i.message}`);
    throw new EstateError('usage', `${file} is invalid: ${problems.join('; ')}`);
  }
  const contexts = parsed.data;
  const holdsCredential = Object.values(contexts.contexts).some((c) => c.api_key_env !== undefined || c.api_key_file !== undefined || c.api_key !== undefined);
  if (holdsCredential && (stats.mode & 0o077) !== 0) {
    throw new EstateError('usage', `${file} names credentials but its mode is ${octal(stats.mode)}: others may read it; run chmod 600 ${file}`);
  }
  return contexts;
}

/** Writes the contexts file with mode 0600 (its folder 0700 when made), atomically. */
export async function writeContextsFile(file: string, contexts: ContextsFile): Promise<void> {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const ordered: ContextsFile = { ...(contexts.current === undefined ? {} : { current: contexts.current }), contexts: contexts.contexts };
  // Loaded here: every command reads this file, few write it.
  const { writeFileAtomic } = await import('../core/atomic-write.ts');
  await writeFileAtomic(file, `${JSON.stringify(ordered, null, 2)}\n`, 0o600);
}

/** Where a context's credential comes from, in words that never hold the key: `$HUB_KEY`, `file ~/k`, `inline`, `none`. */
export function credentialSource(entry: ContextEntry): string {
  if (entry.api_key_env !== undefined) return `$${entry.api_key_env}`;
  if (entry.api_key_file !== undefined) return `file ${entry.api_key_file}`;
  if (entry.api_key !== undefined) return 'inline';
  return 'none';
}

/**
 * The API key of a context, or undefined when it names no credential source.
 * A source that yields nothing (an unset variable, a missing or empty file)
 * is a missing credential: `forbidden` (exit 4), named, never shown.
 */
export function contextApiKey(name: string, entry: ContextEntry, file: string, env: NodeJS.ProcessEnv): string | undefined {
  if (entry.api_key !== undefined) return entry.api_key;
  if (entry.api_key_env !== undefined) {
    const value = env[entry.api_key_env];
    if (!value) throw new EstateError('forbidden', `context ${name} takes its API key from $${entry.api_key_env}, which is not set`);
    return value;
  }
  if (entry.api_key_file === undefined) return undefined;
  const keyFile = keyFilePath(entry.api_key_file, file, env);
  let fd: number;
  try {
    fd = openSync(keyFile, 'r');
  } catch (err) {
    const why = isNotFound(err) ? 'which does not exist' : `which cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
    throw new EstateError('forbidden', `context ${name} takes its API key from ${keyFile}, ${why}`);
  }
  let text: string;
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new EstateError('usage', `the key file of context ${name}, ${keyFile}, is not a regular file`);
    assertPrivate(keyFile, stats, `the key file of context ${name}`);
    text = readFileSync(fd, 'utf8').trim();
  } finally {
    closeSync(fd);
  }
  if (!text) throw new EstateError('forbidden', `context ${name} takes its API key from ${keyFile}, which is empty`);
  return text;
}

/** `~/k` is in the home folder; a relative path is relative to the contexts file's folder. */
export function keyFilePath(given: string, contextsFile: string, env: NodeJS.ProcessEnv): string {
  if (given === '~' || given.startsWith('~/')) return path.join(homeOf(env), given.slice(1));
  return path.resolve(path.dirname(contextsFile), given);
}

function homeOf(env: NodeJS.ProcessEnv): string {
  return env.HOME && path.isAbsolute(env.HOME) ? env.HOME : os.homedir();
}

/** Refuses a file that is not the user's own, or that others may write, as ssh does with its config. */
function assertPrivate(file: string, stats: Stats, what: string): void {
  const uid = process.getuid?.();
  if (uid !== undefined && uid !== 0 && stats.uid !== uid) {
    throw new EstateError('usage', `${what} ${file} belongs to another user (uid ${stats.uid}); estate uses only your own`);
  }
  const loose = what === 'the contexts file' ? 0o022 : 0o077;
  if ((stats.mode & loose) !== 0) {
    const who = loose === 0o022 ? 'others may change it' : 'others may read or change it';
    throw new EstateError('usage', `${what} ${file} has mode ${octal(stats.mode)}: ${who}; run chmod 600 ${file}`);
  }
}

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, '0')}`;
}
