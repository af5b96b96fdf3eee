import type { JsonRecord } from '../jsonl/parse-record.ts';
import type { KeyedLogSpec } from '../keyed-log.ts';
import type { EstateEvent } from './estate-events.ts';

// The watched events as the Store keeps them (DESIGN.md section 3 and 7c):
// stored when they happen, once, whichever replica or restart noticed them
// first, so /events and the webhooks still have them after their inputs
// (the pulse entries, the trend points, the probes, the check-ins) have left
// the windows they are derived from or were pruned.

/** The event kinds estate watches (DESIGN.md 7c): stored when they happen, and what a notify target can ask for. */
export const WATCHED_KINDS = [
  'schedule_late',
  'schedule_down',
  'schedule_recovered',
  'schedule_too_fast',
  'node_stale',
  'node_recovered',
  'pulse_degraded',
  'pulse_unhealthy',
  'pulse_recovered',
  'provider_down',
  'provider_recovered',
] as const;

export type WatchedKind = (typeof WATCHED_KINDS)[number];

export function isWatched(event: { kind: string }): boolean {
  return (WATCHED_KINDS as readonly string[]).includes(event.kind);
}

/**
 * `events/watched.jsonl` (PostgreSQL: table `watched_events`, migration 9):
 * `{id, kind, source, subject, ts, message, occurrence, recorded_at}`, once
 * per event: its kind and `occurrence` (its subject and time), so the same
 * event noticed again (by another replica, after a restart, with a message
 * that has aged: `not seen for 20m`) is a replay of the first. `id` is
 * `ev_` + 16 hex; `recorded_at` is when it was first noticed.
 */
export const EVENTS: KeyedLogSpec = {
  file: 'events',
  fields: ['kind', 'source', 'subject', 'ts', 'message', 'occurrence'],
  required: ['kind', 'source', 'subject', 'ts', 'message', 'occurrence'],
  key: ['kind', 'occurrence'],
  id: { field: 'id', prefix: 'ev_' },
  time: 'recorded_at',
  facets: ['subject'],
};

/** What identifies an event besides its kind: its subject and its time (`subject@ts`). */
export function occurrenceOf(event: Pick<EstateEvent, 'subject' | 'ts'>): string {
  return `${event.subject}@${event.ts}`;
}

/** The one key of an event, whether derived or stored: kind, subject and time. */
export function eventKey(event: Pick<EstateEvent, 'kind' | 'subject' | 'ts'>): string {
  return JSON.stringify([event.kind, event.subject, event.ts]);
}

/** The record an event is stored as (the client fields of EVENTS). */
export function eventRecord(event: EstateEvent): JsonRecord {
  const { ts, kind, source, subject, message } = event;
  return { kind, source, subject, ts, message, occurrence: occurrenceOf(event) };
}

/** The event a stored record holds, in the shape /events answers; undefined for a record that is not one of a watched kind with a time. */
export function storedEvent(record: JsonRecord): EstateEvent | undefined {
  const { ts, kind, source, subject, message } = record;
  if (typeof ts !== 'string' || typeof kind !== 'string' || typeof source !== 'string' || typeof subject !== 'string' || typeof message !== 'string') return undefined;
  if (!isWatched({ kind }) || !Number.isFinite(Date.parse(ts))) return undefined;
  return { ts, kind, source, subject, message } as EstateEvent;
}
