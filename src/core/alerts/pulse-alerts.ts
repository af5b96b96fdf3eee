// Alerts on the pulse (DESIGN.md 7c): a node's pulse turning degraded or
// unhealthy, and back, as events. A condition fires once it has held for
// `hold` (no entry of another status within it; `0` fires on its first
// entry), and so does its recovery: a pulse that flaps faster than `hold`
// fires nothing more. Pure: derived from the pulse entries (oldest first),
// so every reader, and a server after a restart, sees the same events.

export type PulseStatus = 'healthy' | 'degraded' | 'unhealthy';

export interface PulseEntry {
  ms: number;
  status: PulseStatus;
  /** The checks that were not healthy, as `name` or `name at VALUE`. */
  failing: string[];
}

export interface PulseAlert {
  ts: string;
  kind: 'pulse_degraded' | 'pulse_unhealthy' | 'pulse_recovered';
  subject: string;
  message: string;
}

const KIND = { degraded: 'pulse_degraded', unhealthy: 'pulse_unhealthy', healthy: 'pulse_recovered' } as const;

/**
 * The alerts of `node`'s pulse entries (oldest first) up to `nowMs`. The
 * pulse starts as healthy (nothing fired); a run of entries of one status
 * that lasts `holdMs` (to the next entry of another status, or to now)
 * fires at its start plus `holdMs` when its status is not the one fired
 * last. `cut`: the entries are the newest of a longer history, so the
 * first run may have begun (and fired) before them: it is taken as fired
 * and fires nothing, so a spell longer than the entries read keeps the
 * events it had, rather than one that moves with every new entry.
 */
export function pulseAlerts(node: string, entries: readonly PulseEntry[], holdMs: number, nowMs: number, cut = false): PulseAlert[] {
  const alerts: PulseAlert[] = [];
  let fired: PulseStatus = cut && entries[0] ? entries[0].status : 'healthy';
  let firedFailing: string[] = [];
  for (let i = 0; i < entries.length; ) {
    const first = entries[i] as PulseEntry;
    let j = i + 1;
    while (j < entries.length && (entries[j] as PulseEntry).status === first.status) j++;
    // The run [i, j) holds from its first entry until the next of another status (or now).
    const until = j < entries.length ? (entries[j] as PulseEntry).ms : nowMs;
    const firesAt = first.ms + holdMs;
    if (first.status !== fired && (holdMs === 0 || until >= firesAt)) {
      // The checks failing by the time it fires: those of the run's last entry seen by then.
      let k = i;
      while (k + 1 < j && (entries[k + 1] as PulseEntry).ms <= firesAt) k++;
      const failing = (entries[k] as PulseEntry).failing;
      alerts.push({ ts: new Date(firesAt).toISOString(), kind: KIND[first.status], subject: node, message: messageOf(node, first.status, failing, firedFailing, holdMs) });
      fired = first.status;
      firedFailing = failing;
    }
    i = j;
  }
  return alerts;
}

function messageOf(node: string, status: PulseStatus, failing: string[], before: string[], holdMs: number): string {
  const held = holdMs ? ` for ${Math.round(holdMs / 1000)} s` : '';
  if (status === 'healthy') return `${node} is healthy again${held}${before.length ? ` (was: ${before.join(', ')})` : ''}`;
  return `${node} is ${status}${held}${failing.length ? `: ${failing.join(', ')}` : ''}`;
}

/**
 * A pulse entry as the collector writes it (`{ts, status, checks: {NAME:
 * {status, value}}}`; a check may also be a bare status string), or
 * undefined when it has no time or no status of the three.
 */
export function pulseEntryOf(record: Record<string, unknown>): PulseEntry | undefined {
  const ms = typeof record.ts === 'string' ? Date.parse(record.ts) : Number.NaN;
  const status = record.status;
  if (!Number.isFinite(ms) || (status !== 'healthy' && status !== 'degraded' && status !== 'unhealthy')) return undefined;
  const failing: string[] = [];
  const checks = record.checks;
  if (checks && typeof checks === 'object' && !Array.isArray(checks)) {
    for (const [name, check] of Object.entries(checks as Record<string, unknown>)) {
      const c = check && typeof check === 'object' ? (check as Record<string, unknown>) : { status: check };
      if (c.status !== 'degraded' && c.status !== 'unhealthy') continue;
      failing.push(typeof c.value === 'number' ? `${name} at ${Math.round(c.value * 10) / 10}` : name);
    }
  }
  return { ms, status, failing };
}
