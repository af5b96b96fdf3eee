import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

// A child in a PID namespace of its own (`unshare --pid --fork --mount-proc`),
// as a process in another container sharing a volume: its pids mean nothing
// here, so its locks are judged by their heartbeat alone.

/** The command that runs a program in a new PID namespace. */
export const UNSHARE_PID = ['unshare', '--pid', '--fork', '--kill-child', '--mount-proc'];

/** Why this machine cannot make a new PID namespace (for skipWithout), or false when it can. */
export function pidNamespacesUnavailable(): string | false {
  if (process.platform !== 'linux') return 'PID namespaces are Linux only';
  const probe = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true'], { encoding: 'utf8' });
  if (probe.error) return `unshare is not available (${probe.error.message}; apt-get install util-linux)`;
  if (probe.status !== 0) return `this machine does not allow a new PID namespace (unshare: ${probe.stderr.trim() || `exit ${probe.status}`}; needs root or user namespaces)`;
  return false;
}

/** The pid (as seen from here) of the one child of `unshare`: the program it runs. */
export function unsharedPid(unsharePid: number): number | undefined {
  try {
    return Number(readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, 'utf8').trim().split(' ')[0]) || undefined;
  } catch {
    return undefined;
  }
}
