import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Who holds an inter-process lock, as one JSON line in the lock file:
 * `{"host","boot","pidns","pid","token"}`. `boot` is the kernel's boot id and
 * `pidns` the PID namespace (`pid:[4026531836]`), both null where the system
 * does not show them; `token` is random, one per acquisition.
 */
export interface LockOwner {
  host: string;
  boot: string | null;
  pidns: string | null;
  pid: number;
  token: string;
}

type Identity = Omit<LockOwner, 'token'>;

let self: Identity | undefined;

function identity(): Identity {
  self ??= {
    host: hostname(),
    boot: readOrNull(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()),
    pidns: readOrNull(() => readlinkSync('/proc/self/ns/pid')),
    pid: process.pid,
  };
  return self;
}

function readOrNull(read: () => string): string | null {
  try {
    return read() || null;
  } catch {
    return null;
  }
}

/** This process as the owner of a new lock, with a fresh token. */
export function newLockOwner(): LockOwner {
  return { ...identity(), token: randomBytes(16).toString('hex') };
}

/** The owner a lock file names, or undefined for anything else (an old-format bare pid, a torn or foreign file). */
export function parseLockOwner(text: string): LockOwner | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { host, boot, pidns, pid, token } = value as Record<string, unknown>;
  const nullableString = (v: unknown): v is string | null => v === null || typeof v === 'string';
  if (typeof host !== 'string' || !nullableString(boot) || !nullableString(pidns) || typeof token !== 'string') return undefined;
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return undefined;
  return { host, boot, pidns, pid, token };
}

/**
 * Whether `owner.pid` means the same process here as where the lock was taken:
 * the same host, boot and PID namespace (on Linux the namespace must be known).
 * Only then may a dead pid prove a lock stale.
 */
export function pidIsComparable(owner: LockOwner): boolean {
  const me = identity();
  if (process.platform === 'linux' && (me.pidns === null || me.boot === null)) return false;
  return owner.host === me.host && owner.boot === me.boot && owner.pidns === me.pidns;
}
