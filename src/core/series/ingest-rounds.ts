import type { HeartbeatEntry } from '../collect/sample-types.ts';
import type { JsonRecord } from '../jsonl/parse-record.ts';
import type { AppendResult, RecordLog } from '../record-log.ts';
import type { IngestResult, SeriesName, SeriesSample } from '../store/store.ts';
import { newestEntries } from './heartbeat-document.ts';
import { checkedSample, recordKey } from './series-logs.ts';

interface Caller {
  samples: readonly SeriesSample[];
  parts: ReturnType<typeof checkedSample>[];
  resolve: (result: IngestResult) => void;
  reject: (err: unknown) => void;
}

/**
 * A hub's ingest on the data dir (Series.ingest), in rounds: the requests
 * that arrive while a round is being written go into the next one, so each
 * round writes every log once for all of them (one lock, one write, one
 * fdatasync per log) however many requests it carries. A round stores the
 * disk snapshots and pulse entries (both logs at once), then the trend
 * points, which say a sample is stored: a crash between them is completed
 * when the sample is sent again. Then its heartbeat entries go to
 * `mergeNewest` (coalesced, heartbeat-queue.ts) while the next round
 * starts; each request is answered once its heartbeat is written. Each
 * request's samples are stored in their order, and a request fails alone
 * when only its records do.
 */
export function ingestRounds(
  log: (series: SeriesName) => RecordLog,
  mergeNewest: (entries: readonly HeartbeatEntry[]) => Promise<unknown>,
): (samples: readonly SeriesSample[]) => Promise<IngestResult> {
  let waiting: Caller[] = [];
  let running = false;

  const round = async (callers: Caller[]): Promise<void> => {
    // Every append of a stage is asked for at once: one flush of each log for the whole round.
    const first = await Promise.allSettled(
      callers.map((c) => Promise.all([storeOnce(log('disk'), 'disk', c.parts.flatMap((p) => p.disks)), storeOnce(log('pulse'), 'pulse', c.parts.map((p) => p.pulse))])),
    );
    const ready = callers.filter((c, i) => settledOk(first[i] as PromiseSettledResult<unknown>, c));
    const second = await Promise.allSettled(ready.map((c) => storeOnce(log('trends'), 'trends', c.parts.map((p) => p.trend))));
    const stored: { caller: Caller; created: number }[] = [];
    ready.forEach((caller, i) => {
      const result = second[i] as PromiseSettledResult<AppendResult[]>;
      if (settledOk(result, caller)) stored.push({ caller, created: (result as PromiseFulfilledResult<AppendResult[]>).value.filter((r) => r.outcome === 'created').length });
    });
    if (!stored.length) return;
    const heartbeat = mergeNewest(newestEntries(stored.flatMap((s) => s.caller.samples)));
    for (const { caller, created } of stored) {
      heartbeat.then(
        () => caller.resolve({ stored: created, duplicates: caller.samples.length - created }),
        (err: unknown) => caller.reject(err),
      );
    }
  };

  const drain = async () => {
    while (waiting.length) {
      const callers = waiting;
      waiting = [];
      try {
        await round(callers);
      } catch (err) {
        for (const c of callers) c.reject(err);
      }
    }
    running = false;
  };

  return (samples) =>
    new Promise<IngestResult>((resolve, reject) => {
      // A sample that is not one (checkedSample) refuses its request alone, before anything of it is stored.
      const parts = samples.map(checkedSample);
      if (!samples.length) {
        resolve({ stored: 0, duplicates: 0 });
        return;
      }
      waiting.push({ samples, parts, resolve, reject });
      if (!running) {
        running = true;
        void drain();
      }
    });
}

/** Whether a caller's stage went through; if not, the caller is answered with its error. */
function settledOk(result: PromiseSettledResult<unknown>, caller: Caller): boolean {
  if (result.status === 'fulfilled') return true;
  caller.reject(result.reason);
  return false;
}

/** Appends each record unless a record with its key (recordKey) is stored (in `log` or earlier in `records`). */
export function storeOnce(log: RecordLog, series: SeriesName, records: readonly JsonRecord[]): Promise<AppendResult[]> {
  return log.appendAll(records.map((record) => ({ key: recordKey(series, record), same: always, create: () => record })));
}

const always = () => true;
