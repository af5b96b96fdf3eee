import { randomBytes } from 'node:crypto';
import { open, readdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Store } from './store/store.ts';

export type CheckName = 'data_dir_readable' | 'data_dir_writable' | 'credential_store';

/** Each check: `ok`, or the error code that failed it (never a path); plus the store's own checks (Store.health). */
export type Readiness = Record<CheckName, string> & Record<string, string>;

/** Probes running now, by data dir: concurrent callers share one. */
const inFlight = new Map<string, Promise<Readiness>>();

/**
 * Whether the data dir can be read (listed) and written: a probe file with a
 * unique name is created (O_EXCL, mode 0600), written, fdatasync'd and
 * removed, so a full disk, a read-only mount or lost permissions show here
 * before a write fails; and the store's checks (`store.health()`: for the
 * data dir, whether keys.json can be read and parsed, `corrupt` when it
 * cannot be parsed). Never throws. Concurrent calls share one probe.
 */
export function dataDirReadiness(dataDir: string, store: Store): Promise<Readiness> {
  let probe = inFlight.get(dataDir);
  if (!probe) {
    probe = checkDataDir(dataDir, store).finally(() => inFlight.delete(dataDir));
    inFlight.set(dataDir, probe);
  }
  return probe;
}

async function checkDataDir(dataDir: string, store: Store): Promise<Readiness> {
  const readable = await outcome(() => readdir(dataDir).then(() => {}));
  const writable = readable === 'ok' ? await outcome(() => writeProbe(dataDir)) : 'skipped';
  // The data dir's credential store is a file in it: not checked when the data dir cannot be read.
  const stored = readable === 'ok' || store.kind !== 'data-dir' ? await store.health() : { credential_store: 'skipped' };
  return { data_dir_readable: readable, data_dir_writable: writable, credential_store: 'skipped', ...stored };
}

async function writeProbe(dataDir: string): Promise<void> {
  const file = path.join(dataDir, `.readyz-${process.pid}-${randomBytes(6).toString('hex')}.probe`);
  const handle = await open(file, 'wx', 0o600);
  try {
    await handle.write('ready\n');
    await handle.datasync();
  } finally {
    await handle.close().catch(() => {});
    await unlink(file).catch(() => {});
  }
}

async function outcome(check: () => Promise<void>): Promise<string> {
  try {
    await check();
    return 'ok';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : 'failed';
  }
}
