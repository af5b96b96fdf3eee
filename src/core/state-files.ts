import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { dataPath } from './data-files.ts';
import { isNotFound } from './fs-errors.ts';

export const STATE_FILES = ['scoreboard', 'heartbeat', 'estate_map'] as const;
export type StateName = (typeof STATE_FILES)[number];

/** State files larger than this are reported, not read. */
const MAX_STATE_BYTES = 16 * 1024 * 1024;

export interface StateText {
  name: StateName;
  text: string;
  modified_at: string;
}

/** The raw text of one state file, or undefined when it does not exist. `name` is one of STATE_FILES, never a path. */
export async function readStateText(dataDir: string, name: StateName): Promise<StateText | undefined> {
  if (!(STATE_FILES as readonly string[]).includes(name)) return undefined;
  const file = path.join(dataPath(dataDir, 'state'), `${name}.json`);
  try {
    const info = await stat(file);
    if (!info.isFile()) return undefined;
    if (info.size > MAX_STATE_BYTES) throw new Error(`state file ${name} is larger than ${MAX_STATE_BYTES} bytes`);
    return { name, text: await readFile(file, 'utf8'), modified_at: info.mtime.toISOString() };
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export interface StateDocument {
  name: StateName;
  exists: boolean;
  modified_at: string | null;
  /** The parsed JSON; null when the file is missing or not valid JSON. */
  data: unknown;
  /** Why `data` is null although the file exists. */
  error: string | null;
}

/** One state file parsed; a missing or corrupt file is described, never thrown. */
export async function readStateDocument(dataDir: string, name: StateName): Promise<StateDocument> {
  const state = await readStateText(dataDir, name);
  if (!state) return { name, exists: false, modified_at: null, data: null, error: null };
  try {
    return { name, exists: true, modified_at: state.modified_at, data: JSON.parse(state.text), error: null };
  } catch (err) {
    return { name, exists: true, modified_at: state.modified_at, data: null, error: `not valid JSON: ${(err as Error).message}` };
  }
}

export interface StateExcerpt {
  name: StateName;
  modified_at: string;
  size_chars: number;
  max_chars: number;
  truncated: boolean;
  /** The file's text, cut at `max_chars` characters. */
  content: string;
}

export async function readStateExcerpt(dataDir: string, name: StateName, maxChars: number): Promise<StateExcerpt | undefined> {
  const state = await readStateText(dataDir, name);
  if (!state) return undefined;
  const chars = [...state.text];
  const truncated = chars.length > maxChars;
  return {
    name,
    modified_at: state.modified_at,
    size_chars: chars.length,
    max_chars: maxChars,
    truncated,
    content: truncated ? chars.slice(0, maxChars).join('') : state.text,
  };
}
