import { z } from 'zod';
import { EstateError } from '../errors.ts';
import { dataPath } from './data-files.ts';
import { isNotFound } from './fs-errors.ts';
import { openDataFile } from './open-data-file.ts';

export interface LedgerRepo {
  name: string;
  url: string;
  description: string | null;
}

export interface RepoLedger {
  items: LedgerRepo[];
  /** Entries of the file that are not `{name, url, description?}`. */
  skipped: number;
}

const MAX_LEDGER_BYTES = 8 * 1024 * 1024;

const entry = z.looseObject({
  name: z.string().min(1).max(300),
  url: z.string().min(1).max(2000),
  description: z.string().max(5000).nullish(),
});

/**
 * The repository ledger `repos.json`: an array of `{name, url, description?}`.
 * A missing file is an empty ledger; malformed entries are skipped and
 * counted. A file that is not a JSON array throws an `io` EstateError naming it.
 */
export async function readRepoLedger(dataDir: string): Promise<RepoLedger> {
  const file = dataPath(dataDir, 'repos');
  let text: string;
  try {
    const handle = await openDataFile(file);
    try {
      if ((await handle.stat()).size > MAX_LEDGER_BYTES) throw new EstateError('io', `the repository ledger repos.json is larger than ${MAX_LEDGER_BYTES} bytes`);
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    if (isNotFound(err)) return { items: [], skipped: 0 };
    if (err instanceof EstateError) throw err;
    throw new EstateError('io', `cannot read the repository ledger repos.json: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { cause: err });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new EstateError('io', `the repository ledger repos.json is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  if (!Array.isArray(raw)) throw new EstateError('io', 'the repository ledger repos.json is not a JSON array');
  const items: LedgerRepo[] = [];
  let skipped = 0;
  for (const value of raw) {
    const parsed = entry.safeParse(value);
    if (parsed.success) items.push({ name: parsed.data.name, url: parsed.data.url, description: parsed.data.description ?? null });
    else skipped++;
  }
  return { items, skipped };
}
