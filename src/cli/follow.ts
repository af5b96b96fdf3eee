import { Option } from 'commander';
import type { EstateContext } from '../api/context.ts';
import type { JsonRecord } from '../core/jsonl/parse-record.ts';
import { DEFAULT_MAX_ANSWER_BYTES } from '../config.ts';
import { EstateError, type ErrorCode } from '../errors.ts';
import type { CliIO } from './io.ts';
import type { CommandExtension, CommandRun } from './operation-commands.ts';
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
 * it), until SIGINT or SIGTERM: one order, newest at the bottom. With
 * `--json`, one JSON object per line (NDJSON) and nothing else on stdout.
 * Locally it watches the
 * log; with --url it reads the server's /work/stream, resuming after the last
 * completion seen when the connection drops. Nothing recorded between the
 * feed and the follow is missed: both continue from the feed's newest item.
 */
export function followExtension(io: CliIO): CommandExtension {
  // JSON output (--json, --json FIELDS, -o json): one object per line; else one completionLine each.
  const printer = (run: CommandRun) => {
    const out = chooseOutput(run.options as OutputOptions, io.isTTY);
    const json = (r: JsonRecord) => JSON.stringify(out.fields ? selectFields(r, out.fields) : r);
    return (record: JsonRecord) => io.stdout(`${out.format === 'json' ? json(record) : completionLine(record)}\n`);
  };
  return {
    options: [
      new Option('--follow', 'print the feed oldest first, then each new completion as it arrives, until interrupted (one JSON object per line with --json)'),
    ],
    print: (run: CommandRun) => {
      if (!run.options.follow) return false;
      const items = (run.result.body as { items?: JsonRecord[] }).items ?? [];
      const print = printer(run);
      for (const record of [...items].reverse()) print(record);
      return true;
    },
    after: async (run: CommandRun) => {
      if (!run.options.follow) return;
      const board = run.raw.query?.board;
      const print = printer(run);
      if (run.remote) {
        const newest = (run.result.body as { items?: JsonRecord[] }).items?.[0]?.id;
        await followRemote(run.remote, typeof newest === 'string' ? newest : 'start', board, print, io);
      } else if (run.ctx) {
        await followLocal(run.ctx, board, print, io);
      }
    },
  };
}

/** One completion on one line: `2026-11-21T18:48:00.000Z  garden/EST-273  gardener  Draft index of field notes`, controls escaped. */
export function completionLine(c: JsonRecord): string {
  const text = [String(c.completed_at), `${String(c.board)}/${String(c.task_id)}`, String(c.assignee), String(c.title)].join('  ');
  return escapeControls(text.replace(/[\r\n\t]+/g, ' '));
}

async function followLocal(ctx: EstateContext, board: string | undefined, print: (r: JsonRecord) => void, io: CliIO): Promise<void> {
  const completions = ctx.store.completions;
  const report = (err: unknown) => io.stderr(`estate: ${escapeControls(`following the completions in the ${ctx.store.describe()}: ${(err as Error).message}`)}\n`);
  // The feed already caught up: what the subscription delivers from here on is new.
  const unsubscribe = await completions.subscribe((records) => {
    for (const r of records) if (board === undefined || r.board === board) print(r);
  }, report);
  try {
    await completions.refresh();
    await io.onStop();
  } finally {
    await unsubscribe();
  }
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
