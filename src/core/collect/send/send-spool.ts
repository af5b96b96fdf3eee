import { EstateError } from '../../../errors.ts';
import type { SeriesSample } from '../../store/store.ts';
import { type HubTarget, type IngestAnswer, postSamples } from './post-samples.ts';
import type { SampleSpool, SpoolBatch } from './sample-spool.ts';

/** At most this many samples in one `POST /ingest` (DESIGN.md 7a's bound). */
export const BATCH_SAMPLES = 1000;
/** At most this many bytes of samples in one request, under the server's usual 1 MiB body limit; a 413 halves it. */
export const BATCH_BYTES = 512 * 1024;

/** A sample the hub refused (422), dropped from the spool: its time and the hub's reason. */
export interface RefusedSample {
  ts: string;
  reason: string;
}

/**
 * What one `sendSpool` did: samples the hub took (`sent`, of which
 * `duplicates` it had already), samples it refused, unreadable spool lines
 * cut, and how it ended: `drained` (nothing left to send), `unavailable`
 * (no answer, 429, 5xx: try again later), `denied` (a 4xx such as a wrong
 * key: the samples stay in the spool), `busy` (another sender has the
 * spool), `stopped` (the signal aborted it; the batch in flight stays).
 */
export interface SendReport {
  outcome: 'drained' | 'unavailable' | 'denied' | 'busy' | 'stopped';
  sent: number;
  duplicates: number;
  refused: RefusedSample[];
  unreadable: number;
  /** Why it stopped, for `unavailable` and `denied`. */
  message?: string;
  status?: number;
  retryAfterMs?: number;
}

export interface SendOptions {
  signal?: AbortSignal;
  /** How long to wait for another sender of the same spool. Default 2 s. */
  lockTimeoutMs?: number;
  /** Called after each batch the hub took, with the report so far. */
  progress?: (report: SendReport) => void;
}

/**
 * Sends the spool to the hub, oldest first, batch after batch
 * (≤ BATCH_SAMPLES samples, ≤ BATCH_BYTES), until it is empty or the hub
 * stops taking them. A batch leaves the spool only after the hub's 2xx
 * (`spool.acknowledge`). A 422 names the samples it refuses: those are
 * dropped (reported in `refused`) and the rest sent again; when the answer
 * names none, the batch is halved until the refused sample is alone. A
 * 413 halves the batch too; a single sample over the limit is refused.
 * Any other answer stops the send with the batch still in the spool. A
 * batch that reached the end of the spool ends the send once acknowledged
 * (a sample appended meanwhile waits for the next send: the running
 * collector wakes its sender after each append). The spool is compacted at
 * the end when its acknowledged head has grown enough (within the same
 * sender lock).
 */
export async function sendSpool(spool: SampleSpool, target: HubTarget, options: SendOptions = {}): Promise<SendReport> {
  const report: SendReport = { outcome: 'drained', sent: 0, duplicates: 0, refused: [], unreadable: 0 };
  try {
    return await spool.withSendLock(async () => {
      let batchBytes = BATCH_BYTES;
      let last: SpoolBatch | undefined;
      try {
        for (;;) {
          if (options.signal?.aborted) return { ...report, outcome: 'stopped' };
          const batch = (last = await spool.readBatch(BATCH_SAMPLES, batchBytes));
          if (batch.end === batch.start) return report;
          const stop = await deliver(target, batch.samples, report, options.signal, () => (batchBytes = Math.max(16 * 1024, Math.floor(batchBytes / 2))));
          if (stop) return { ...report, ...stop };
          report.unreadable += batch.unreadable;
          await spool.acknowledge(batch);
          options.progress?.(report);
          // A sample appended since the read is another send's: the collector wakes its sender for each one.
          if (batch.atEnd) return report;
        }
      } finally {
        if (!options.signal?.aborted) await spool.compact(last);
      }
    }, options.lockTimeoutMs ?? 2_000);
  } catch (err) {
    if (err instanceof EstateError && err.code === 'unavailable' && report.sent === 0) return { ...report, outcome: 'busy', message: 'another collector is sending this spool' };
    throw err;
  }
}

type Stop = Pick<SendReport, 'outcome' | 'message' | 'status' | 'retryAfterMs'>;

/** Sends `samples` until the hub has taken or refused each one; answers why it stopped otherwise. */
async function deliver(target: HubTarget, samples: SeriesSample[], report: SendReport, signal: AbortSignal | undefined, shrink: () => void): Promise<Stop | undefined> {
  let pending = samples;
  while (pending.length > 0) {
    const answer: IngestAnswer = await postSamples(target, pending, signal);
    if (signal?.aborted) return { outcome: 'stopped' };
    switch (answer.kind) {
      case 'stored':
        report.sent += pending.length;
        report.duplicates += answer.duplicates;
        return undefined;
      case 'refused': {
        const named = refusedIndexes(answer.issues, pending.length);
        if (named.size > 0) {
          for (const i of named) report.refused.push({ ts: pending[i]!.trend.ts, reason: reasonFor(answer.issues, i) ?? answer.message });
          pending = pending.filter((_, i) => !named.has(i));
          continue;
        }
        if (pending.length === 1) {
          report.refused.push({ ts: pending[0]!.trend.ts, reason: answer.message });
          return undefined;
        }
        return halves(target, pending, report, signal, shrink);
      }
      case 'too_large':
        shrink();
        if (pending.length === 1) {
          report.refused.push({ ts: pending[0]!.trend.ts, reason: answer.message });
          return undefined;
        }
        return halves(target, pending, report, signal, shrink);
      case 'denied':
        return { outcome: 'denied', message: answer.message, status: answer.status };
      case 'unavailable':
        return { outcome: 'unavailable', message: answer.message, ...(answer.status ? { status: answer.status } : {}), ...(answer.retryAfterMs !== undefined ? { retryAfterMs: answer.retryAfterMs } : {}) };
    }
  }
  return undefined;
}

async function halves(target: HubTarget, samples: SeriesSample[], report: SendReport, signal: AbortSignal | undefined, shrink: () => void): Promise<Stop | undefined> {
  const middle = Math.ceil(samples.length / 2);
  return (await deliver(target, samples.slice(0, middle), report, signal, shrink)) ?? deliver(target, samples.slice(middle), report, signal, shrink);
}

/** The indexes of the samples a 422 names (`loc`: ["body", "samples", i, ...]), within the batch. */
function refusedIndexes(issues: { loc: (string | number)[] }[], count: number): Set<number> {
  const found = new Set<number>();
  for (const { loc } of issues) {
    const at = loc.indexOf('samples');
    const i = at >= 0 ? Number(loc[at + 1]) : NaN;
    if (Number.isInteger(i) && i >= 0 && i < count) found.add(i);
  }
  return found;
}

function reasonFor(issues: { loc: (string | number)[]; msg: string }[], index: number): string | undefined {
  const issue = issues.find(({ loc }) => Number(loc[loc.indexOf('samples') + 1]) === index);
  return issue ? `${issue.loc.join('.')}: ${issue.msg}` : undefined;
}
