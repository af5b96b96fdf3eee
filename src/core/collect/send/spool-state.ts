import { writeFileAtomic } from '../../atomic-write.ts';
import { readDataFile } from '../../open-data-file.ts';

/**
 * Where the sender stands in a spool file (`collect/spool-<node>.state.json`):
 * the spool's `generation` (the id in its first line) and the `offset` of
 * its first sample not yet acknowledged by the hub nor dropped; `dropped`:
 * samples dropped past the bound and not yet said in a pulse.
 *
 * The state names its generation because a compaction renames a new spool
 * file over the old one before it writes the state: a state of another
 * generation is read as "nothing acknowledged" (offset: after the header),
 * so a crash between the two sends samples again (the hub knows them by
 * node and ts) and never skips one.
 */
export interface SpoolState {
  generation: string;
  offset: number;
  dropped: number;
}

/** The state as written, or a blank one (generation '') when missing or unreadable: everything in the spool is unacknowledged then. */
export async function readSpoolState(file: string): Promise<SpoolState> {
  let value: unknown;
  try {
    value = JSON.parse(await readDataFile(file));
  } catch {
    return { generation: '', offset: 0, dropped: 0 };
  }
  const v = value as Partial<SpoolState> | null;
  const whole = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
  return {
    generation: typeof v?.generation === 'string' ? v.generation : '',
    offset: whole(v?.offset) ? v.offset : 0,
    dropped: whole(v?.dropped) ? v.dropped : 0,
  };
}

/**
 * Replaces the state atomically (temp file, rename), without an fsync: a
 * state lost in a crash (the old one back, or an empty file read as blank)
 * only moves the offset back, so samples the hub already took are sent
 * again and the hub, which knows a sample by its node and `ts`, stores them
 * once. It never moves the offset forward: within a generation offsets only
 * grow, and a state of another generation means "nothing acknowledged". So
 * nothing unacknowledged is skipped (DESIGN.md 7a: at least once, no
 * duplicates on the hub); the spool's samples themselves are fsync'd.
 */
export async function writeSpoolState(file: string, state: SpoolState): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(state)}\n`, 0o600, undefined, { durable: false });
}
