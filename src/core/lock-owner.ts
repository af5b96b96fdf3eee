import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Who holds an inter-process lock, as one JSON line in the lock file:
 * `{"host","boot","pidns","pid","start","token"}`. `boot` is the kernel's
 * boot id, `pidns` the PID namespace (`pid:[4026531836]`) and `start` the
 * process's start time (clock ticks after boot, from /proc), each null where
 * the system does not show it (`start` is absent from the lines of older
 * estates); `token` is random, one per acquisition.
 */
export interface LockOwner {
  host: string;
  boot: string | null;
  pidns: string | null;
  pid: number;
  start: string | null;
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
    start: processStart(process.pid),
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
  const { host, boot, pidns, pid, start = null, token } = value as Record<string, unknown>;
  const nullableString = (v: unknown): v is string | null => v === null || typeof v === 'string';
  if (typeof host !== 'string' || !nullableString(boot) || !nullableString(pidns) || !nullableString(start) || typeof token !== 'string') return undefined;
  if (typeof pid !== 'number' || !Number.isInteger(pid) || pid <= 0) return undefined;
  return { host, boot, pidns, pid, start, token };
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

/**
 * Whether the process that took a lock still runs, as far as this process
 * can tell: `running` (its pid is alive and started when the lock line says),
 * `gone` (its pid is dead, or now names a process started at another time),
 * or `unknown` (a pid of another host, container or boot; or an alive pid
 * with no start time to compare: an older estate's line, a system without
 * /proc). Only a comparable pid (pidIsComparable) is ever looked up.
 */
export function ownerProcess(owner: LockOwner): 'running' | 'gone' | 'unknown' {
  if (!pidIsComparable(owner)) return 'unknown';
  if (!pidIsAlive(owner.pid)) return 'gone';
  const stat = owner.start === null ? undefined : processStat(owner.pid);
  // An exited holder not yet reaped by its parent (a zombie) holds nothing.
  if (stat?.state === 'Z' || stat?.state === 'X') return 'gone';
  if (stat?.start === undefined) return pidIsAlive(owner.pid) ? 'unknown' : 'gone';
  return stat.start === owner.start ? 'running' : 'gone';
}

function pidIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The start time of a process, else null. */
function processStart(pid: number): string | null {
  return processStat(pid)?.start ?? null;
}

/** Fields 3 (state) and 22 (start time) of /proc/<pid>/stat, read after the command name (which may hold spaces and parentheses); undefined where it cannot be read. */
function processStat(pid: number): { state: string; start: string | undefined } | undefined {
  const stat = readOrNull(() => readFileSync(`/proc/${pid}/stat`, 'utf8'));
  if (stat === null) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = fields[19];
  return { state: fields[0] ?? '', start: start !== undefined && /^\d+$/.test(start) ? start : undefined };
}
