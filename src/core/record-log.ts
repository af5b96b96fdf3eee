import type { Stats } from 'node:fs';
import { type FileHandle, lstat } from 'node:fs/promises';
import { withFileLock } from './file-lock.ts';
import { isNotFound } from './fs-errors.ts';
import { type AppendedLines, appendRecordsTo, ensureFolder, openForAppend } from './jsonl/append-record.ts';
import { endsLineAt, facetPasses, identityOf, IndexedFile, lastPositions, loadRecords, matching, type Cover, type FacetFilter, type FacetValue, type Look } from './jsonl/indexed-file.ts';
import { BackwardLines, MORE } from './jsonl/read-lines-backward.ts';
import type { IndexTally, LogIndex, LogIndexOptions } from './jsonl/log-index.ts';
import { parseRecord, type JsonRecord } from './jsonl/parse-record.ts';
import { tailRecords } from './jsonl/tail-records.ts';
import { parseSharedRecord } from './jsonl/shared-records.ts';
import { assertInsideDataDir, openDataFile, openDataFileInfo } from './open-data-file.ts';
import { observeLogAppend, observing } from './observe.ts';

export type { FacetFilter, FacetValue };

export interface RecordLogOptions extends LogIndexOptions {
  file: string;
  /** The inter-process writer lock (default: `<file>.lock`). */
  lockFile?: string;
  lockTimeoutMs?: number;
}

export interface AppendRequest {
  /** The idempotency key (`LogIndexOptions.key` of the record `create` makes). */
  key: string;
  /** Whether a stored record with this key answers the same request (a safe replay). */
  same: (stored: JsonRecord) => boolean;
  /** Makes the record to store; called only when the key is new, under the writer lock. */
  create: () => JsonRecord;
  /**
   * A unique facet value (`uniqueFacets`) the new record holds, such as its
   * id when it was made elsewhere: when another record holds it already,
   * the request is a `conflict` with that record and nothing is written.
   */
  unique?: FacetValue;
}

/** `created`: written and synced; `replayed`: the same request was stored before; `conflict`: another one was. */
export interface AppendResult {
  outcome: 'created' | 'replayed' | 'conflict';
  /** The stored record (for a conflict: the one already there). */
  record: JsonRecord;
}

export interface LogPage {
  /** Newest first. */
  records: JsonRecord[];
  /** Lines passed over for this page because they are not records. */
  skipped: number;
}

type Listener = (records: JsonRecord[]) => void;

/** Records a time window reads back at once. */
const WINDOW_BATCH = 4096;

/** The first index of ascending `list` whose value is at or above `value`. */
function firstAtOrAbove(list: { readonly length: number; at(index: number): number | undefined }, value: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list.at(mid) as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The appends asked for by one call (`append`, `appendAll`): settled once all of them are, or at the first that fails. */
interface PendingGroup {
  results: AppendResult[];
  left: number;
  resolve: (results: AppendResult[]) => void;
  reject: (err: unknown) => void;
}

interface Pending {
  request: AppendRequest;
  group: PendingGroup;
  /** Its place in the group's results. */
  index: number;
}

function settle(p: Pending, result: AppendResult | { error: unknown }): void {
  const { group } = p;
  if (group.left <= 0) return;
  if ('error' in result) {
    group.left = 0;
    group.reject(result.error);
    return;
  }
  group.results[p.index] = result;
  if (--group.left === 0) group.resolve(group.results);
}

/** Appends waiting at once are written in batches of at most this many records (a hub's round of requests: tens of thousands of samples a minute, 75 disk snapshots a request). */
const MAX_BATCH = 4096;
/** How many times a read opens the log again when the file was replaced under it. */
const MAX_REOPEN = 3;
/** Records read back kept for the next reads of an unchanged log (the newest pages, each group's newest): about 1 KB each. */
const MAX_KEPT = 2048;
/** Pages up to this long are answered from the index and the records kept when the log is unchanged. */
const MAX_KEPT_PAGE = 100;
/** The handle appends go through is closed after this long without one. */
const WRITER_IDLE_MS = 2000;

/**
 * An append-only JSONL log with an in-memory index, safe for many writers in
 * many processes. Contract:
 *
 * - `append` checks the key and appends under an in-process queue and the
 *   inter-process lock file, after catching the index up with whatever other
 *   processes wrote; a `created` result means the line is on disk (fdatasync).
 *   Appends that wait while another batch is being written are written
 *   together: one write and one sync for the batch.
 * - The index learns only the bytes appended since it last looked; a file that
 *   shrank, was replaced (another inode) or no longer ends a line where the
 *   index stopped is read again from the start. What this log appends is
 *   indexed from the bytes it wrote, not read back: the same bytes. The
 *   handle appends go through is kept between them while the path still
 *   names its file (checked under the lock each time), closed when idle.
 * - Lines that are not records (corrupt, torn by a crash) are skipped and
 *   counted; a partial last line is left until it ends.
 * - Every read sees every append acknowledged before it began. Reads run
 *   at once, neither behind each other nor behind appends: each opens the
 *   file and uses the index as far as it describes that file. `newest` never
 *   waits for the index: it reads the lines the index does not know yet (all
 *   of them while it is first built) backwards from the end, until it has
 *   the page or meets the index. Other reads wait only when the file holds
 *   lines the index has not read, for one catch-up shared by all of them.
 * - Subscribers get the records that appear, by any writer, in file order,
 *   when the index catches up (after an append, on `refresh()`, or after a
 *   read found lines it did not know).
 */
export class RecordLog {
  readonly file: string;
  readonly #options: RecordLogOptions;
  readonly #lockFile: string;
  readonly #indexed: IndexedFile;
  #folderReady = false;
  /** The log open for appends (#openWriter), with the identity (device and inode) of the file it has open. */
  #writer: { handle: FileHandle; identity: string } | undefined;
  #writerIdle: NodeJS.Timeout | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #pending: Pending[] = [];
  #flushQueued = false;
  #refreshQueued: Promise<void> | undefined;
  readonly #listeners = new Set<Listener>();
  /** Records read back through the current index, by position (at most MAX_KEPT, the oldest read first out); shared, frozen. */
  #kept: { index: LogIndex | undefined; records: Map<number, JsonRecord> } = { index: undefined, records: new Map() };
  /** The last page longer than MAX_KEPT_PAGE read while the index covered the whole file (see #newestLong); frozen. */
  #longPage: { index: LogIndex; end: number; limit: number; where: string; page: LogPage } | undefined;

  constructor(options: RecordLogOptions) {
    this.file = options.file;
    this.#options = options;
    this.#lockFile = options.lockFile ?? `${options.file}.lock`;
    this.#indexed = new IndexedFile(options);
  }

  /** Stores the record `request.create()` makes unless its key is taken; see AppendResult. */
  async append(request: AppendRequest): Promise<AppendResult> {
    return (await this.appendAll([request]))[0] as AppendResult;
  }

  /**
   * `append` of each request, in order, as if each were asked for alone
   * (the first with a key creates it; a later one with that key, here or
   * elsewhere, is a replay or a conflict), with one promise for them all:
   * the results in the requests' order, or the first error.
   */
  appendAll(requests: readonly AppendRequest[]): Promise<AppendResult[]> {
    if (!requests.length) return Promise.resolve([]);
    return new Promise<AppendResult[]>((resolve, reject) => {
      const group: PendingGroup = { results: new Array<AppendResult>(requests.length), left: requests.length, resolve, reject };
      for (let index = 0; index < requests.length; index++) this.#pending.push({ request: requests[index] as AppendRequest, group, index });
      this.#queueFlush();
    });
  }

  /**
   * The newest `limit` records (of the facet values `where` asks for), newest
   * first. Without `where` the file is read backwards from its end, O(limit)
   * whatever its size and without waiting for writes or for the index to load;
   * with `where` the index answers, and the lines it does not know yet are
   * read backwards (see #newestOf): it never waits for the index either.
   * `skipped` counts the lines passed over, a torn last line included.
   */
  async newest(limit: number, where?: FacetFilter): Promise<LogPage> {
    const kept = await this.#newestKept(limit, where);
    if (kept) return kept;
    if (limit > MAX_KEPT_PAGE) return this.#newestLong(limit, where);
    return this.#newestRead(limit, where);
  }

  #newestRead(limit: number, where: FacetFilter | undefined): Promise<LogPage> {
    if (!where) return this.#tail(limit);
    return this.#withHandle((handle) => this.#newestOf(handle, limit, where));
  }

  /**
   * `newest` of a page longer than MAX_KEPT_PAGE: read as any other, and
   * kept (the last one asked for) when the index covered the whole file as
   * it was before the read; the same page, the same frozen object, answers
   * again while the file is as it was then (an lstat shows the same file,
   * size and time of change), so its answer can be kept too (a feed of 1,000).
   */
  async #newestLong(limit: number, where: FacetFilter | undefined): Promise<LogPage> {
    // A filter by predicate has no key to know it again by: read, not kept.
    if (where && !('value' in where)) return this.#newestRead(limit, where);
    const cover = await this.#unchangedCover();
    const filter = where ? `${where.facet}\u0000${where.value}` : '';
    const last = this.#longPage;
    if (cover && last && last.index === cover.index && last.end === cover.end && last.limit === limit && last.where === filter) return last.page;
    const page = await this.#newestRead(limit, where);
    if (!cover) return page;
    // Frozen, records and all: every later reader of this page gets these very objects.
    for (const record of page.records) Object.freeze(record);
    const frozen: LogPage = Object.freeze({ records: Object.freeze(page.records) as JsonRecord[], skipped: page.skipped });
    this.#longPage = { index: cover.index, end: cover.end, limit, where: filter, page: frozen };
    return frozen;
  }

  /** The record stored under `key` (AppendRequest.key), if any. */
  byKey(key: string): Promise<JsonRecord | undefined> {
    return this.#settled(async (handle, index) => {
      const records = await loadRecords(handle, index, index.keyCandidates(key));
      return records.find((r) => index.keyOf(r) === key);
    });
  }

  /** The first record whose facet `facet` is `value`. */
  find(facet: string, value: string): Promise<JsonRecord | undefined> {
    return this.#settled(async (handle, index) => {
      if (index.isHashed(facet)) return (await matching(handle, index, { facet, value }))[0]?.record;
      const position = index.positions(facet, value).at(0);
      if (position === undefined) return undefined;
      const [record] = await loadRecords(handle, index, [position]);
      return record;
    });
  }

  /**
   * The records after the one whose facet `cursor.facet` is `cursor.value`
   * (or every record, for `'start'`), oldest first, the newest `limit` of them
   * when there are more; optionally of the facet values `where` asks for. undefined when the
   * cursor names no record.
   */
  since(cursor: FacetValue | 'start', limit: number, where?: FacetFilter): Promise<JsonRecord[] | undefined> {
    return this.#settled(async (handle, index) => {
      let after = -1;
      if (cursor !== 'start') {
        const position = index.isHashed(cursor.facet)
          ? (await matching(handle, index, cursor))[0]?.position
          : index.positions(cursor.facet, cursor.value).at(0);
        if (position === undefined) return undefined;
        after = position;
      }
      return loadRecords(handle, index, await this.#lastPositions(handle, index, where, limit, after));
    });
  }

  /**
   * Calls `each` with the records whose time (`options.time`) is in
   * `[fromMs, toMs)`, of one facet value when `where` names one, in file
   * order, a batch at a time: found through the index's time column
   * (LogIndex.timeWindow) once it knows the file as it is now, so only the
   * range's records (and those interleaved with them) are read.
   */
  window(fromMs: number, toMs: number, where: FacetValue | undefined, each: (batch: { time: number; record: JsonRecord }[]) => void): Promise<void> {
    return this.#settled(async (handle, index) => {
      const { lo, hi } = index.timeWindow(fromMs, toMs);
      const inRange = (p: number) => {
        const time = index.timeAt(p);
        return time >= fromMs && time < toMs;
      };
      const positions: number[] = [];
      if (where) {
        const list = index.positions(where.facet, where.value);
        for (let i = firstAtOrAbove(list, lo); i < list.length; i++) {
          const p = list.at(i) as number;
          if (p >= hi) break;
          if (inRange(p)) positions.push(p);
        }
      } else for (let p = lo; p < hi; p++) if (inRange(p)) positions.push(p);
      for (let i = 0; i < positions.length; i += WINDOW_BATCH) {
        const batch = positions.slice(i, i + WINDOW_BATCH);
        const records = new Map<number, JsonRecord>();
        await loadRecords(handle, index, batch, records);
        each(batch.flatMap((p) => {
          const record = records.get(p);
          return record ? [{ time: index.timeAt(p), record }] : [];
        }));
      }
    });
  }

  /** The values of exact facet `facet` that the log's records hold (LogIndex.facetValues), once the index knows the file as it is now. */
  facetValues(facet: string): Promise<string[]> {
    return this.#settled(async (_handle, index) => index.facetValues(facet));
  }

  /** Exact counts over every record (LogIndex.tally), with the newest record of each group read back. */
  async tally(cutoffs: readonly number[]): Promise<IndexTally & { newest: Map<number, JsonRecord> }> {
    const index = await this.#unchanged();
    if (index) {
      const counts = index.tally(cutoffs);
      const newest = await this.#readBack(index, counts.groups.map((g) => g.newest));
      if (newest) return { ...counts, newest };
    }
    return this.#settled(async (handle, index) => {
      const counts = index.tally(cutoffs);
      const newest = new Map<number, JsonRecord>();
      await loadRecords(handle, index, counts.groups.map((g) => g.newest), newest, parseSharedRecord);
      this.#keep(index, newest);
      return { ...counts, newest };
    });
  }

  /** Catches the index up with the file now, telling subscribers what is new. Concurrent calls share one pass. */
  refresh(): Promise<void> {
    this.#refreshQueued ??= this.#exclusive(async () => {
      this.#refreshQueued = undefined;
      await this.#withHandle((handle) => this.#catchUp(handle));
    });
    return this.#refreshQueued;
  }

  /** Calls `listener` with each batch of records that appear in the log; returns the unsubscribe function. */
  subscribe(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  // ------------------------------------------------------------ appends

  #queueFlush(): void {
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    void this.#exclusive(() => this.#flush());
  }

  async #flush(): Promise<void> {
    this.#flushQueued = false;
    const batch = this.#pending.splice(0, MAX_BATCH);
    if (this.#pending.length) this.#queueFlush();
    if (!batch.length) return;
    const results: (AppendResult | { error: unknown })[] = [];
    try {
      // The first (full) read of the log happens outside the writer lock; later ones are short.
      if (!this.#indexed.loaded) await this.#withHandle((handle) => this.#catchUp(handle));
      // The lock file sits beside the log: never create it through a folder that leads out of the data dir.
      await assertInsideDataDir(this.file);
      if (!this.#folderReady) {
        await ensureFolder(this.#lockFile);
        this.#folderReady = true;
      }
      await withFileLock(
        this.#lockFile,
        async (lock) => {
          // The file as it is now: the index caught up with what other processes appended.
          const open = await this.#openWriter();
          await this.#catchUp(open?.handle, open?.look);
          const fresh = await this.#decide(open?.handle, batch, results);
          if (!fresh.length) return;
          await lock.check();
          let handle = open?.handle;
          let span: AppendedLines;
          try {
            if (!handle) handle = await this.#createWriter();
            const info = open?.look.info;
            const appending = observing('logAppend');
            span = await appendRecordsTo(handle, this.file, fresh, info?.size, info !== undefined && this.#indexed.endsLineAt(info));
            observeLogAppend(appending, this.file, fresh.length);
          } catch (err) {
            for (let i = 0; i < results.length; i++) if ((results[i] as AppendResult).outcome === 'created') results[i] = { error: err };
            await this.#dropWriter();
            return;
          }
          // The records are on disk: a failure to index them now is repaired by the next catch-up.
          await this.#indexAppended(handle, span, fresh).catch(() => {});
        },
        { timeoutMs: this.#options.lockTimeoutMs },
      );
    } catch (err) {
      for (const p of batch) settle(p, { error: err });
      return;
    } finally {
      this.#closeWriterWhenIdle();
    }
    batch.forEach((p, i) => settle(p, results[i] as AppendResult | { error: unknown }));
  }

  /**
   * The log open for reading and appending, for a flush under the writer
   * lock, with its stat (taken right after a catch-up ticket); undefined
   * when there is no file. The handle is kept between flushes and serves
   * while the path names that very file (an lstat: the same device and
   * inode, no link), so a flush costs an lstat, not an open, an fstat and a
   * close; a log replaced (prune), removed or turned into a link is opened
   * anew, and refused as openDataFile refuses.
   */
  async #openWriter(): Promise<{ handle: FileHandle; look: Look } | undefined> {
    const ticket = this.#indexed.look();
    let info: Stats;
    try {
      info = await lstat(this.file);
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await this.#dropWriter();
      return undefined;
    }
    const kept = this.#writer;
    if (kept && kept.identity === identityOf(info) && info.isFile()) return { handle: kept.handle, look: { ticket, info } };
    await this.#dropWriter();
    let opened: { handle: FileHandle; info: Stats };
    try {
      opened = await openDataFileInfo(this.file, 'append-existing');
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    this.#writer = { handle: opened.handle, identity: identityOf(opened.info) };
    return { handle: opened.handle, look: { ticket, info: opened.info } };
  }

  /** Creates the log (and its folder) for a first append, and keeps its handle. */
  async #createWriter(): Promise<FileHandle> {
    const handle = await openForAppend(this.file);
    try {
      this.#writer = { handle, identity: identityOf(await handle.stat()) };
    } catch (err) {
      await handle.close().catch(() => {});
      throw err;
    }
    return handle;
  }

  async #dropWriter(): Promise<void> {
    const kept = this.#writer;
    this.#writer = undefined;
    await kept?.handle.close().catch(() => {});
  }

  /** Closes the kept handle once no append came for WRITER_IDLE_MS: an idle log, pruned or removed, holds no old file open. */
  #closeWriterWhenIdle(): void {
    clearTimeout(this.#writerIdle);
    if (!this.#writer) return;
    this.#writerIdle = setTimeout(() => {
      if (!this.#pending.length && !this.#flushQueued) void this.#exclusive(() => this.#dropWriter());
    }, WRITER_IDLE_MS);
    this.#writerIdle.unref();
  }

  /** Indexes the lines just appended from the bytes written (IndexedFile.appended), else by reading them back. */
  async #indexAppended(handle: FileHandle, span: AppendedLines, records: readonly JsonRecord[]): Promise<void> {
    const appeared = this.#indexed.appended(span.start, span.lines, await handle.stat(), this.#listeners.size > 0, records);
    if (appeared === undefined) await this.#catchUp(handle);
    else if (appeared.length) this.#announce(appeared);
  }

  /**
   * Decides each request of a batch against the caught-up index; returns the
   * records to write. The index knows keys by hash: the records of each key's
   * candidate positions are read back, and the first whose key is the
   * request's owns it.
   */
  async #decide(handle: FileHandle | undefined, batch: readonly Pending[], results: (AppendResult | { error: unknown })[]): Promise<JsonRecord[]> {
    const index = this.#indexed.index;
    const candidates = batch.map((p) => index.keyCandidates(p.request.key));
    const known = [...new Set(candidates.flat())];
    const stored = new Map<number, JsonRecord>();
    const loaded = await loadRecords(handle, index, known, stored);
    if (loaded.length !== known.length) throw new Error(`${this.file}: an indexed record can no longer be read`);
    const fresh = new Map<string, JsonRecord>();
    // Unique facet values the batch's new records hold (see AppendRequest.unique).
    const freshUnique = new Map<string, JsonRecord>();
    const uniqueKey = (where: FacetValue) => JSON.stringify([where.facet, where.value]);
    for (const [i, { request }] of batch.entries()) {
      try {
        const owner = (candidates[i] as number[]).map((p) => stored.get(p)).find((r) => r !== undefined && index.keyOf(r) === request.key);
        const existing = owner ?? fresh.get(request.key);
        if (existing) {
          results.push({ outcome: request.same(existing) ? 'replayed' : 'conflict', record: existing });
          continue;
        }
        if (request.unique) {
          const holder = freshUnique.get(uniqueKey(request.unique)) ?? (await matching(handle, index, request.unique))[0]?.record;
          if (holder) {
            results.push({ outcome: 'conflict', record: holder });
            continue;
          }
        }
        const record = request.create();
        if (!this.#options.accept(record) || index.keyOf(record) !== request.key) {
          throw new Error(`${this.file}: a created record is not one of this log's, under the key it was asked for`);
        }
        fresh.set(request.key, record);
        if (request.unique) freshUnique.set(uniqueKey(request.unique), record);
        results.push({ outcome: 'created', record });
      } catch (err) {
        results.push({ error: err });
      }
    }
    return [...fresh.values()];
  }

  // ------------------------------------------------------------ reading

  /** `lastPositions`, with the candidates of a hashed facet checked against their records. */
  async #lastPositions(handle: FileHandle | undefined, index: LogIndex, where: FacetFilter | undefined, count: number, after = -1, before = index.size): Promise<number[]> {
    if (!where || !index.isHashed(where.facet) || !('value' in where)) return lastPositions(index, where, count, after, before);
    const positions = (await matching(handle, index, where)).map((m) => m.position).filter((p) => p > after && p < before);
    return positions.slice(Math.max(0, positions.length - count));
  }

  /**
   * `newest` of the facet values `where` asks for. The lines the index does not know (appended
   * since it last read, or all of them while it is first built) are read
   * backwards from the end of the file, until the page is full or the index,
   * growing meanwhile, knows every line before the one reached; the index
   * answers the rest. A catch-up starts in the background when the file
   * holds lines the index has not read.
   */
  async #newestOf(handle: FileHandle | undefined, limit: number, where: FacetFilter): Promise<LogPage> {
    if (!handle || limit <= 0) {
      if (!handle) this.#catchUpSoon();
      return { records: [], skipped: 0 };
    }
    const info = await handle.stat();
    const ticket = this.#indexed.ticket();
    let cover = this.#indexed.cover(info, ticket);
    // An index of this file that no longer ends a line where it stopped is of other bytes: wait for the next one.
    let stale: LogIndex | undefined;
    if (cover && !cover.unchanged && !(await endsLineAt(handle, cover.end))) {
      stale = cover.index;
      cover = undefined;
    }
    if (!cover?.unchanged) this.#catchUpSoon();
    const valueOf = (record: JsonRecord) => this.#indexed.index.facetValue(where.facet, record);
    const records: JsonRecord[] = [];
    let skipped = 0;
    // Every line that starts at or after `bound` has been read here; the index `met` knows every record before it.
    let bound = info.size;
    let met: Cover | undefined = cover;
    const from = cover?.end ?? 0;
    if (from < info.size) {
      met = undefined;
      let reachedFrom = true;
      const lines = BackwardLines.range(handle, from, info.size);
      try {
        for (let text = lines.next(); text !== undefined; text = lines.next()) {
          if (text === MORE) {
            await lines.read();
            continue;
          }
          if (text !== null && !text.trim()) continue;
          const record = text === null || !lines.lineEnded ? undefined : parseRecord(text);
          if (!record || !this.#options.accept(record)) skipped++;
          else if (facetPasses(where, valueOf(record))) records.push(record);
          bound = lines.lineStart;
          if (records.length >= limit) {
            reachedFrom = false;
            break;
          }
          const now = this.#indexed.cover(info, ticket);
          if (now && now.index !== stale && now.end >= bound) {
            met = now;
            reachedFrom = false;
            break;
          }
        }
      } finally {
        await lines.close();
      }
      if (reachedFrom) {
        bound = from;
        met = cover;
      }
    }
    if (records.length < limit && met) {
      const index = met.index;
      const need = limit - records.length;
      const picked = (await this.#lastPositions(handle, index, where, need, -1, index.countBefore(bound))).reverse();
      const loaded = await loadRecords(handle, index, picked);
      const oldest = picked.length >= need ? index.span(picked.at(-1) as number).offset : 0;
      skipped += index.skippedBetween(oldest, bound) + picked.length - loaded.length;
      records.push(...loaded);
    }
    return { records, skipped };
  }

  /**
   * `newest` when the index has read the whole file as it is now (same file,
   * size and time of change; no partial last line): the index's last
   * positions (of the facet value) are the page, read back from the records
   * kept, or the file. undefined otherwise, and for long pages or hashed
   * facets: then the file is read backwards (#tail, #newestOf). Both give the
   * same page.
   */
  async #newestKept(limit: number, where: FacetFilter | undefined): Promise<LogPage | undefined> {
    if (limit > MAX_KEPT_PAGE || limit <= 0) return undefined;
    const index = await this.#unchanged();
    if (!index || (where && index.isHashed(where.facet))) return undefined;
    const picked = lastPositions(index, where, limit).reverse();
    const records = await this.#readBack(index, picked);
    if (records?.size !== picked.length) return undefined;
    const oldest = picked.length >= limit ? index.span(picked.at(-1) as number).offset : 0;
    return { records: picked.map((p) => records.get(p) as JsonRecord), skipped: index.skippedBetween(oldest, Number.POSITIVE_INFINITY) };
  }

  /**
   * The index, when it has read the whole of the file now at the log's path
   * (an lstat: same file, size and time of change, no partial last line);
   * otherwise undefined. Costs one trip to the thread pool, no open.
   */
  async #unchanged(): Promise<LogIndex | undefined> {
    return (await this.#unchangedCover())?.index;
  }

  /** #unchanged's index, with the end of the file it covers. */
  async #unchangedCover(): Promise<Cover | undefined> {
    if (!this.#indexed.loaded) return undefined;
    let info;
    try {
      info = await lstat(this.file);
    } catch {
      return undefined;
    }
    const cover = this.#indexed.cover(info);
    return cover?.unchanged && cover.end === info.size ? cover : undefined;
  }

  /**
   * The records of `index` at `positions`, from those kept, else read from
   * the file (opened here, and only if it is still the file `index`
   * describes); undefined when it is not, or a record no longer parses.
   */
  async #readBack(index: LogIndex, positions: readonly number[]): Promise<Map<number, JsonRecord> | undefined> {
    const kept = this.#kept.index === index ? this.#kept.records : undefined;
    const found = new Map<number, JsonRecord>();
    const missing: number[] = [];
    for (const p of positions) {
      const record = kept?.get(p);
      if (record) found.set(p, record);
      else missing.push(p);
    }
    if (!missing.length) return found;
    const read = await this.#withHandle(async (handle) => {
      if (!handle || this.#indexed.cover(await handle.stat())?.index !== index) return undefined;
      const loaded = new Map<number, JsonRecord>();
      // Shared (frozen): the records kept are handed to many readers.
      await loadRecords(handle, index, missing, loaded, parseSharedRecord);
      return loaded.size === new Set(missing).size ? loaded : undefined;
    });
    if (!read) return undefined;
    this.#keep(index, read);
    for (const [p, record] of read) found.set(p, record);
    return found;
  }

  /** Keeps records read back through `index` for later reads (see #readBack). */
  #keep(index: LogIndex, records: Map<number, JsonRecord>): void {
    if (this.#kept.index !== index) this.#kept = { index, records: new Map() };
    const kept = this.#kept.records;
    for (const [p, record] of records) {
      kept.delete(p);
      kept.set(p, record);
    }
    for (const p of kept.keys()) {
      if (kept.size <= MAX_KEPT) break;
      kept.delete(p);
    }
  }

  /** Starts a catch-up in the background, unless one is waiting to start. */
  #catchUpSoon(): void {
    if (!this.#refreshQueued) this.refresh().catch(() => {});
  }

  async #tail(limit: number): Promise<LogPage> {
    const { records, skipped } = await tailRecords(this.file, limit, { accept: this.#options.accept });
    return { records, skipped };
  }

  /** Runs `fn` alone among this log's catch-ups and appends (in this process). */
  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#queue.then(fn);
    this.#queue = result.catch(() => {});
    return result;
  }

  /**
   * Runs `fn` with the log open and an index that knows every record of the
   * file as it was when `fn` was called (or later). Waits only when the file
   * changed since the index last read it, for a catch-up that starts after
   * this call; other reads run at once, together.
   */
  async #settled<T>(fn: (handle: FileHandle | undefined, index: LogIndex) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const answer = await this.#withHandle(async (handle): Promise<{ value: T } | undefined> => {
        if (!handle) {
          await this.refresh();
          return { value: await fn(undefined, this.#indexed.index) };
        }
        const info = await handle.stat();
        let index = this.#indexed.settled(info, false);
        if (!index) {
          await this.refresh();
          index = this.#indexed.settled(info, true);
        }
        return index ? { value: await fn(handle, index) } : undefined;
      });
      if (answer) return answer.value;
      // The file this read opened was replaced meanwhile: read the one there now.
      if (attempt >= MAX_REOPEN) throw new Error(`${this.file}: the log was replaced ${MAX_REOPEN} times while being read`);
    }
  }

  /** Runs `fn` with the log open for reading (undefined when there is no file yet). */
  async #withHandle<T>(fn: (handle: FileHandle | undefined) => Promise<T>): Promise<T> {
    let handle: FileHandle | undefined;
    try {
      handle = await openDataFile(this.file);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    try {
      return await fn(handle);
    } finally {
      await handle?.close();
    }
  }

  /** Catches the index up and tells subscribers what appeared. */
  async #catchUp(handle: FileHandle | undefined, look?: Look): Promise<void> {
    const appeared = await this.#indexed.catchUp(handle, this.#listeners.size > 0, look);
    if (appeared.length) this.#announce(appeared);
  }

  #announce(records: JsonRecord[]): void {
    for (const listener of this.#listeners) {
      try {
        listener(records);
      } catch {
        // A subscriber's failure is its own; the log and the other subscribers go on.
      }
    }
  }
}
