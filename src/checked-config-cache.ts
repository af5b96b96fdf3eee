import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

// Checking a config file builds zod schemas: a few milliseconds that every
// command would pay again for the same file. The built CLI keeps what it made
// of the last few config texts in the user's cache folder
// (`$XDG_CACHE_HOME/estate/checked-config.json`, `~/.cache/estate/…`) and
// takes a config from there only when the text is byte for byte the same and
// the build that checked it is this one (a random id each build puts in the
// bundle: each entry names its build, so two installs used in turn keep
// theirs). Anything else, or any trouble
// with the cache file, and the text is checked as usual: the cache never
// changes what a config means, only how soon it is known.
//
// The file is trusted as the user's own config is: it is read only when it
// belongs to the user and nobody else may write it, and written 0600 (its
// folder 0700) with a rename, so a reader never sees half of it.

/** Entries kept: the configs of the last few data dirs a user worked with. */
const MAX_ENTRIES = 8;
/** Texts longer than this are checked every time (a config is a few hundred bytes). */
const MAX_TEXT = 64 * 1024;

interface Entry {
  /** The build that checked it. */
  stamp: string;
  text: string;
  config: unknown;
}

export interface CheckedConfigCache {
  /** What `text` was checked into, if this bundle checked exactly this text before. */
  get(text: string): unknown;
  /** Keeps what `text` was checked into (best effort: a cache that cannot be written is left alone). */
  put(text: string, config: unknown): void;
}

/**
 * The cache of checked configs in `file`, valid for the build `stamp`
 * names. Read once, at the first `get`.
 */
export function checkedConfigCache(file: string, stamp: string): CheckedConfigCache {
  let entries: Entry[] | undefined;
  const load = (): Entry[] => (entries ??= readEntries(file));
  return {
    get(text) {
      return load().find((e) => e.stamp === stamp && e.text === text)?.config;
    },
    put(text, config) {
      if (text.length > MAX_TEXT) return;
      entries = [{ stamp, text, config }, ...load().filter((e) => e.stamp !== stamp || e.text !== text)].slice(0, MAX_ENTRIES);
      writeEntries(file, entries);
    },
  };
}

/** `$XDG_CACHE_HOME/estate/checked-config.json` (an absolute XDG_CACHE_HOME only), else under `$HOME/.cache`; undefined without either. */
export function checkedConfigCacheFile(env: NodeJS.ProcessEnv): string | undefined {
  const xdg = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : undefined;
  const home = env.HOME && path.isAbsolute(env.HOME) ? env.HOME : undefined;
  const dir = xdg ?? (home && path.join(home, '.cache'));
  return dir && path.join(dir, 'estate', 'checked-config.json');
}

function readEntries(file: string): Entry[] {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const stats = fstatSync(fd);
    if (!stats.isFile() || (process.getuid && stats.uid !== process.getuid()) || (stats.mode & 0o022) !== 0) return [];
    const entries: unknown = JSON.parse(readFileSync(fd, 'utf8'));
    if (!Array.isArray(entries)) return [];
    return entries.filter((e: Partial<Entry> | null): e is Entry => typeof e?.stamp === 'string' && typeof e.text === 'string' && typeof e.config === 'object' && e.config !== null);
  } catch {
    return [];
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function writeEntries(file: string, entries: Entry[]): void {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    makeFolder(path.dirname(file));
    writeFileSync(temp, JSON.stringify(entries), { mode: 0o600, flag: 'wx' });
    renameSync(temp, file);
  } catch {
    try {
      unlinkSync(temp);
    } catch {}
  }
}

/**
 * mkdir -p, 0700 (bin/estate does the same for its code cache). Not node's
 * `recursive`, which on Node 20 loops for ever where mkdir answers ENOENT
 * under a folder that exists (XDG_CACHE_HOME=/proc/x).
 */
function makeFolder(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
    return;
  } catch (err) {
    if (isAlreadyThere(err)) return;
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || path.dirname(dir) === dir) throw err;
  }
  makeFolder(path.dirname(dir));
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if (!isAlreadyThere(err)) throw err;
  }
}

const isAlreadyThere = (err: unknown): boolean => (err as NodeJS.ErrnoException).code === 'EEXIST';
