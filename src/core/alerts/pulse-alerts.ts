import { heldChanges, heldText } from './held-conditions.ts';

// Alerts on the pulse (DESIGN.md 7c): a node's pulse turning degraded or
// unhealthy, and back, as events. A condition fires once it has held for
// `hold` (no entry of another status within it; `0` fires on its first
// entry), and so does its recovery: a pulse that flaps faster than `hold`
// fires nothing more (held-conditions.ts). Pure: derived from the pulse
// entries (oldest first), so every reader, and a server after a restart,
// sees the same events.

export type PulseStatus = 'healthy' | 'degraded' | 'unhealthy';

export interface PulseEntry {
  ms: number;
  status: PulseStatus;
  /** The checks that were not healthy, as `name` or `name at VALUE`. */
  failing: readonly string[];
}

export interface PulseAlert {
  ts: string;
  kind: 'pulse_degraded' | 'pulse_unhealthy' | 'pulse_recovered';
  subject: string;
  message: string;
}

const KIND = { degraded: 'pulse_degraded', unhealthy: 'pulse_unhealthy', healthy: 'pulse_recovered' } as const;

/**
 * The alerts of `node`'s pulse entries (oldest first) up to `nowMs`: the
 * pulse starts as healthy (nothing fired; or as `initial`: windowInitial), and each status that holds for
 * `holdMs` fires once (heldChanges), naming the checks failing by then.
 */
export function pulseAlerts(node: string, entries: readonly PulseEntry[], holdMs: number, nowMs: number, initial: PulseStatus = 'healthy'): PulseAlert[] {
  const observations = entries.map((e) => ({ ms: e.ms, state: e.status, detail: e.failing }));
  return heldChanges(observations, initial, holdMs, nowMs).map((c) => ({
    ts: new Date(c.ms).toISOString(),
    kind: KIND[c.state],
    subject: node,
    message: messageOf(node, c.state, c.detail, c.before, holdMs),
  }));
}

function messageOf(node: string, status: PulseStatus, failing: readonly string[], before: readonly string[], holdMs: number): string {
  const held = heldText(holdMs);
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
  // One empty list for every entry without a failing check: the event recorder keeps 200 entries per node between passes.
  return { ms, status, failing: failing.length ? failing : NO_FAILING };
}

const NO_FAILING: readonly string[] = Object.freeze([]);
