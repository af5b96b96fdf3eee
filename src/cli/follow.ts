import { Option } from 'commander';
import type { EstateContext } from '../api/context.ts';
import type { JsonRecord } from '../core/jsonl/parse-record.ts';
import { DEFAULT_MAX_ANSWER_BYTES } from '../config.ts';
import { EstateError, type ErrorCode } from '../errors.ts';
import type { CliIO } from './io.ts';
import type { CommandExtension, CommandRun } from './operation-commands.ts';
import { formatDelimited } from './output/format-delimited.ts';
import { chooseOutput, type OutputOptions } from './output/output-options.ts';
import { selectFields } from './output/select-fields.ts';
import type { RemoteTarget } from './remote-call.ts';
import { readAnswer, refuseRedirect } from './remote-answer.ts';
import { refusalError } from './remote-refusal.ts';
import { escapeControls } from './safe-text.ts';
import { sseEvents } from './sse-events.ts';

const RECONNECT_MS = 2000;
/** Most bytes of a refused stream's answer read, for its `detail`. */
const ERROR_BODY_BYTES = 64 * 1024;
/** Refused streams that retrying will not fix. */
const FATAL: Readonly<Record<number, ErrorCode>> = { 400: 'usage', 404: 'not_found', 405: 'method_not_allowed', 422: 'validation' };

/**
 * `estate work feed --follow`: prints the feed as lines, oldest first, then
 * appends each new completion as it is recorded (of `--board` only, with
 * it), until SIGINT or SIGTERM: one order, newest at the bottom. Lines are
 * `completionLine`s (the default, and with -o table or wide); with `--json`
 * or `-o json` one JSON object per line (NDJSON) and nothing else on stdout;
 * with `-o tsv` tab-separated rows under one header line. `-o yaml` and
 * `-o csv` are documents that cannot grow line by line: a usage error.
 * Locally it subscribes to the completions before the feed is read and
 * prints what arrived meanwhile after it, each completion once; with --url
 * it reads the server's /work/stream from the feed's newest item, resuming
 * after the last completion seen when the connection drops. Nothing recorded
 * between the feed and the follow is missed.
 */
export function followExtension(io: CliIO): CommandExtension {
  const subscriptions = new WeakMap<object, LocalFollow>();
  const printers = new WeakMap<object, (record: JsonRecord) => void>();
  return {
    options: [
      new Option(
        '--follow',
        'print the feed oldest first, then each new completion as it arrives, until interrupted: one line each, one JSON object per line with --json or -o json, tab-separated under one header with -o tsv (-o yaml and -o csv do not apply)',
      ),
    ],
    before: async (options, ctx) => {
      if (!options.follow) return undefined;
      followFormat(options, io.isTTY); // a usage error before anything is read
      if (!ctx) return undefined;
      const local = await subscribeCompletions(ctx, io);
      subscriptions.set(options, local);
      return local.end;
    },
    print: (run: CommandRun) => {
      if (!run.options.follow) return false;
      const items = (run.result.body as { items?: JsonRecord[] }).items ?? [];
      const print = followPrinter(run, io);
      printers.set(run.options, print);
      for (const record of [...items].reverse()) print(record);
      return true;
    },
    after: async (run: CommandRun) => {
      if (!run.options.follow) return;
      const board = run.raw.query?.board;
      const print = printers.get(run.options) ?? followPrinter(run, io);
      const items = (run.result.body as { items?: JsonRecord[] }).items ?? [];
      if (run.remote) {
        const newest = items[0]?.id;
        await followRemote(run.remote, typeof newest === 'string' ? newest : 'start', board, print, io);
      } else {
        const local = subscriptions.get(run.options);
        if (local) await local.follow(items, board, print);
      }
    },
  };
}

type FollowFormat = { kind: 'json'; fields: string[] | undefined } | { kind: 'tsv'; headers: boolean } | { kind: 'lines' };

/** How `--follow` prints, from the output options: a usage error for a format that cannot grow line by line. */
function followFormat(options: OutputOptions, isTTY: boolean): FollowFormat {
  const out = chooseOutput(options, isTTY); // --json with another -o is a usage error
  if (out.format === 'json') return { kind: 'json', fields: out.fields };
  if (options.output === 'yaml' || options.output === 'csv') {
    throw new EstateError('usage', `--follow prints one line per completion and cannot do -o ${options.output}: use --json (one object per line), -o tsv or the default lines`);
  }
  if (options.output === 'tsv') return { kind: 'tsv', headers: out.headers };
  return { kind: 'lines' };
}

/** Prints one completion as `followFormat` says; with -o tsv the header line is printed at once, and once. */
function followPrinter(run: CommandRun, io: CliIO): (record: JsonRecord) => void {
  const format = followFormat(run.options as OutputOptions, io.isTTY);
  if (format.kind === 'json') return (r) => io.stdout(`${JSON.stringify(format.fields ? selectFields(r, format.fields) : r)}\n`);
  if (format.kind === 'tsv') {
    const columns = (run.op.cli ? run.op.cli.columns : undefined) ?? FEED_COLUMNS;
    if (format.headers) io.stdout(formatDelimited('tsv', columns, [], true));
    return (r) => io.stdout(formatDelimited('tsv', columns, [r], false));
  }
  return (r) => io.stdout(`${completionLine(r)}\n`);
}

const FEED_COLUMNS = ['completed_at', 'board', 'task_id', 'assignee', 'title'];

/** One completion on one line: `2026-11-21T18:48:00.000Z  garden/EST-273  gardener  Draft index of field notes`, controls escaped. */
export function completionLine(c: JsonRecord): string {
  const text = [String(c.completed_at), `${String(c.board)}/${String(c.task_id)}`, String(c.assignee), String(c.title)].join('  ');
  return escapeControls(text.replace(/[\r\n\t]+/g, ' '));
}

/** A subscription to the completions, opened before the feed is read. */
interface LocalFollow {
  /** Prints what arrived since subscribing, then each new completion, skipping those of `shown` (the feed), until stopped. */
  follow(shown: readonly JsonRecord[], board: string | undefined, print: (r: JsonRecord) => void): Promise<void>;
  end(): Promise<void>;
}

/** Most ids remembered to print each completion once (a record may come again from the store: store.ts, `subscribe`). */
const SEEN_IDS = 10_000;

async function subscribeCompletions(ctx: EstateContext, io: CliIO): Promise<LocalFollow> {
  const completions = ctx.store.completions;
  const report = (err: unknown) => io.stderr(`estate: ${escapeControls(`following the completions in the ${ctx.store.describe()}: ${(err as Error).message}`)}\n`);
  // Until `follow` starts, what arrives waits here, in write order.
  let pending: JsonRecord[] | undefined = [];
  let deliver: (records: JsonRecord[]) => void = () => {};
  const unsubscribe = await completions.subscribe((records) => {
    if (pending) pending.push(...records);
    else deliver(records);
  }, report);
  return {
    end: unsubscribe,
    async follow(shown, board, print) {
      const seen = new Set<string>();
      const once = (r: JsonRecord) => {
        const id = typeof r.id === 'string' ? r.id : undefined;
        if (id !== undefined) {
          if (seen.has(id)) return;
          seen.add(id);
          if (seen.size > SEEN_IDS) seen.delete(seen.values().next().value as string);
        }
        if (board === undefined || r.board === board) print(r);
      };
      for (const r of shown) if (typeof r.id === 'string') seen.add(r.id);
      deliver = (records) => records.forEach(once);
      const waiting = pending ?? [];
      pending = undefined;
      waiting.forEach(once);
      await completions.refresh();
      await io.onStop();
    },
  };
}

async function followRemote(target: RemoteTarget, after: string, board: string | undefined, print: (r: JsonRecord) => void, io: CliIO): Promise<void> {
  const controller = new AbortController();
  void io.onStop().then(() => controller.abort());
  let cursor = after;
  let warned = false;
  while (!controller.signal.aborted) {
    const url = new URL('work/stream', target.url.endsWith('/') ? target.url : `${target.url}/`);
    url.searchParams.set('after', cursor);
    if (board !== undefined) url.searchParams.set('board', board);
    try {
      const headers: Record<string, string> = { Accept: 'text/event-stream' };
      if (target.apiKey) headers['X-API-Key'] = target.apiKey;
      const response = await fetch(url, { headers, signal: controller.signal, redirect: 'manual' });
      refuseRedirect(response, target, url, 'work/stream');
      if (!response.ok || !response.body) {
        const fatal = FATAL[response.status];
        const detail = await readAnswer(response, { ...target, maxBytes: ERROR_BODY_BYTES }, new AbortController()).then(
          (text) => (JSON.parse(text) as { detail?: unknown } | null)?.detail,
          () => undefined,
        );
        // A refused credential in the CLI's words, as every remote command says it.
        if (response.status === 403) throw refusalError(target, typeof detail === 'string' ? detail : undefined);
        const message = typeof detail === 'string' ? detail : Array.isArray(detail) ? JSON.stringify(detail) : `HTTP ${response.status}`;
        if (fatal) throw new EstateError(fatal, `${target.url}: ${message}`);
        throw new Error(message);
      }
      warned = false;
      for await (const event of sseEvents(response.body, target.maxBytes ?? DEFAULT_MAX_ANSWER_BYTES, target.url)) {
        if (event.id) cursor = event.id;
        if (event.event !== 'completion') continue;
        try {
          print(JSON.parse(event.data) as JsonRecord);
        } catch {
          // Not JSON: not a completion this client can show.
        }
      }
      throw new Error('the server ended the stream');
    } catch (err) {
      if (controller.signal.aborted) break;
      if (err instanceof EstateError) throw err;
      if (!warned) io.stderr(`estate: ${escapeControls(`stream from ${target.url} interrupted (${(err as Error).message}); reconnecting`)}\n`);
      warned = true;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, RECONNECT_MS);
      controller.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }
}
