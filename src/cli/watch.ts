import path from 'node:path';
import { Option } from 'commander';
import type { EstateContext, Principal } from '../api/context.ts';
import type { Operation } from '../api/define-operation.ts';
import type { RawInput } from '../api/parse-input.ts';
import { type OperationResult, runOperation } from '../api/run-operation.ts';
import { EstateError } from '../errors.ts';
import type { CliIO } from './io.ts';
import { chooseOutput, type OutputOptions } from './output/output-options.ts';
import { selectFields } from './output/select-fields.ts';
import { remoteCall, type RemoteTarget } from './remote-call.ts';
import { escapeControls } from './safe-text.ts';

const DEFAULT_INTERVAL_S = 2;
/** Changes closer together than this make one redraw (a writer's several appends). */
const DEBOUNCE_MS = 100;
/** Home, then clear the screen: the next rendering replaces the last one on a terminal. */
const CLEAR_SCREEN = '\x1b[H\x1b[2J';

/** `--watch` and `--interval`, for the commands whose operation has `cli.watch`. */
export function watchOptions(): Option[] {
  return [
    new Option(
      '--watch',
      'print the answer again each time it changes, until interrupted: redrawn in place on a terminal, one rendering after another when piped (one JSON document per line with --json)',
    ),
    new Option('--interval <seconds>', `with --watch, how often to check (default: ${DEFAULT_INTERVAL_S}); locally a change to the files read is seen at once too`),
  ];
}

export interface WatchRun {
  op: Operation;
  raw: RawInput;
  io: CliIO;
  options: OutputOptions & { watch?: unknown; interval?: string };
  /** The server to poll, in remote mode. */
  remote: RemoteTarget | undefined;
  /** The context to run the operation with, in local mode. */
  ctx: EstateContext | undefined;
  principal: Principal | undefined;
  /** Prints one answer as the command would without --watch. */
  print: (result: OperationResult) => Promise<void> | void;
}

/**
 * `--watch`: shows the answer, then shows it again each time it changes,
 * until SIGINT or SIGTERM (then resolves: exit 0). It checks every
 * `--interval` seconds; locally also as soon as one of the files of
 * `op.cli.watch` changes (watchLog), and remotely with If-None-Match, so an
 * unchanged answer costs the server a 304. An answer equal to the one shown
 * is not shown again. On a terminal each rendering replaces the last;
 * piped, renderings follow each other separated by a blank line, and with
 * `--json` each is one line (NDJSON). An error at the first check ends the
 * command as it would without --watch; later ones are reported on stderr
 * (once until the next success) and the last rendering stays.
 */
export async function watchOperation(run: WatchRun): Promise<void> {
  const { op, io } = run;
  const intervalMs = intervalOf(run.options.interval, run.options.watch === true);
  // Any JSON output (--json, --json FIELDS, -o json) becomes one document per line.
  const json = chooseOutput(run.options, io.isTTY);
  const ndjson = json.format === 'json';
  const stopping = new AbortController();
  void io.onStop().then(() => stopping.abort());

  let etag: string | undefined;
  let shown: string | undefined;
  let reported: string | undefined;
  const check = async (): Promise<void> => {
    let result: OperationResult;
    if (run.remote) {
      const answer = await remoteCall(op, run.remote, run.raw, { etag, signal: stopping.signal });
      if (answer.status === 304) return;
      etag = answer.etag;
      result = answer;
    } else {
      result = await runOperation(op, run.ctx as EstateContext, run.raw, run.principal);
    }
    reported = undefined;
    const key = JSON.stringify(result.body);
    if (key === shown || stopping.signal.aborted) return;
    const first = shown === undefined;
    shown = key;
    if (ndjson) return void io.stdout(`${json.fields ? JSON.stringify(selectFields(result.body, json.fields)) : key}\n`);
    if (io.isTTY) io.stdout(`${CLEAR_SCREEN}${escapeControls(`estate ${op.cli ? op.cli.command : op.id} · every ${intervalMs / 1000}s · ${new Date().toLocaleTimeString()} · Ctrl-C to stop`)}\n\n`);
    else if (!first) io.stdout('\n');
    await run.print(result);
  };

  let dirty = false;
  let wake = () => {};
  const trigger = () => {
    dirty = true;
    wake();
  };
  stopping.signal.addEventListener('abort', trigger, { once: true });
  const timer = setInterval(trigger, intervalMs);
  const watchers: { close: () => Promise<void> }[] = [];
  try {
    if (run.ctx && op.cli && op.cli.watch?.length) {
      const { watchLog } = await import('../core/watch-log.ts'); // loaded only with --watch
      const dataDir = run.ctx.dataDir;
      const onError = (err: unknown) => io.stderr(`estate: ${escapeControls(`watching the data dir: ${(err as Error).message}`)}\n`);
      for (const file of op.cli.watch) watchers.push(await watchLog(path.join(dataDir, file), trigger, onError));
    }
    // Watching before the first check: a change made while it runs is seen.
    dirty = false;
    try {
      await check();
    } catch (err) {
      if (stopping.signal.aborted) return;
      throw err;
    }
    while (!stopping.signal.aborted) {
      if (!dirty) await new Promise<void>((resolve) => (wake = resolve));
      if (stopping.signal.aborted) break;
      await new Promise((resolve) => setTimeout(resolve, DEBOUNCE_MS));
      dirty = false;
      try {
        await check();
      } catch (err) {
        if (stopping.signal.aborted) break;
        const message = err instanceof Error ? err.message : String(err);
        if (message !== reported) io.stderr(`estate: ${escapeControls(message)} (still watching)\n`);
        reported = message;
      }
    }
  } finally {
    clearInterval(timer);
    await Promise.all(watchers.map((w) => w.close()));
  }
}

function intervalOf(text: string | undefined, watch: boolean): number {
  if (!watch) throw new EstateError('usage', '--interval goes with --watch');
  if (text === undefined) return DEFAULT_INTERVAL_S * 1000;
  const seconds = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text.trim()) || !(seconds >= 0.1 && seconds <= 3600)) {
    throw new EstateError('usage', `--interval: a number of seconds from 0.1 to 3600, like 2 or 0.5, not "${text}"`);
  }
  return seconds * 1000;
}
