import { mkdtemp, rm } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command, Option } from 'commander';
import { createContext, type EstateContext } from '../../api/context.ts';
import { assertDataDir, envSettings, eventWatch, loadConfig, resolveDataDir, serveSettings } from '../../config.ts';
import { parseDuration } from '../../core/duration.ts';
import { keysCreateHint, liveKeyCount } from '../../core/first-key.ts';
import { EstateError } from '../../errors.ts';
import { projectRoot } from '../../project-root.ts';
import { addDataDirOptions } from '../common-options.ts';
import type { CliIO } from '../io.ts';
import type { CollectorSettings } from '../../core/collect/collect-loop.ts';
import type { RetentionReport } from '../../core/retention/retention-timer.ts';
import type { RollupReport } from '../../core/rollups/follow-rollups.ts';
import { collectSettings, retentionOf } from '../collect-settings.ts';
import { LOG_FORMATS, type LogFormat, serveLogSink } from '../serve-log.ts';

interface ServeOptions {
  dataDir?: string;
  config?: string;
  store?: string;
  host?: string;
  port?: string;
  demo?: boolean;
  quiet?: boolean;
  logFormat?: LogFormat;
  collect?: boolean;
  interval?: string;
}

export function serveCommand(io: CliIO): Command {
  const cmd = new Command('serve')
    .description('Serve the HTTP API over a data dir until SIGTERM or SIGINT')
    .option('--host <host>', 'address to listen on (default: config serve.host, else 127.0.0.1)')
    .option('--port <port>', 'port to listen on; 0 picks a free one (default: config serve.port, else 8080)')
    .option('--demo', 'serve a temporary copy of the demo estate and print a demo key')
    .option('--quiet', 'log no line per request (warnings and errors are still logged)')
    .option('--collect', 'also sample this node as estate collect does, into the served store (see estate collect --help)')
    .option('--interval <duration>', 'with --collect: sample every DURATION, like 30s (default: collect.interval in the config, else 60s)')
    .addOption(
      new Option('--log-format <format>', 'log lines on stderr: text (one short line a request) or json (one JSON object a line) (default: text when stderr is a terminal, else json)').choices(
        LOG_FORMATS,
      ),
    );
  addDataDirOptions(cmd);
  cmd.addHelpText(
    'after',
    '\nIt serves a dashboard at /dashboard (nodes, charts over any window, the pulse,\n' +
      'builds, events, schedules and the live work feed): open it in a browser and paste an API\n' +
      'key once (estate keys create --user dash --scope read: a key that only reads).\n' +
      'Agents reach it at /mcp (the Model Context Protocol: every operation a tool;\n' +
      'see estate mcp --help).\n' +
      '\nWith collect.retention in the config, the server prunes the series it serves\n' +
      '(its own and those its nodes send) at most once an hour, as estate prune does,\n' +
      'with or without --collect; its log says collect_pruned with what was dropped.\n' +
      '\nWith providers in the config, it probes each every providers_probe_s (30 s;\n' +
      '0: never) and stores the probes, from which estate events derives\n' +
      'provider_down and provider_recovered (held for alerts.hold, 1m).\n' +
      '\nWith notify targets in the config, the server sends the events it watches\n' +
      '(schedules late or down, nodes stale, pulses degraded, and their recoveries)\n' +
      'to them as signed Standard Webhooks, retried from a durable outbox; see\n' +
      'estate notify test and estate notify log, and docs/notify.md.\n' +
      '\nExamples:\n  $ estate serve --data-dir /var/lib/estate --port 8080\n  $ estate serve --collect --interval 10s\n  $ estate serve --demo --port 0\n  $ estate serve --log-format json 2>>/var/log/estate.jsonl\n',
  );
  cmd.action(async (options: ServeOptions) => {
    // The server's modules load only for this command, so other commands start fast.
    const [{ copyDemoEstate }, { createApp }, { listen, listenLimits }, { keepHeapSmall }, { startRetention }, { warmUp }] = await Promise.all([
      import('../../core/demo-estate.ts'),
      import('../../server/create-app.ts'),
      import('../../server/listen.ts'),
      import('../../server/heap-settings.ts'),
      import('../../core/retention/retention-timer.ts'),
      import('../../server/warm-up.ts'),
    ]);
    keepHeapSmall(process.execArgv, io.env.NODE_OPTIONS);
    let stopped = false;
    void io.onStop().then(() => (stopped = true));
    let tempDir: string | undefined;
    // The demo's temporary copy goes on every way out: an error, a signal, a second signal (atExit).
    let cancelAtExit = () => {};
    try {
      let dataDir: string;
      if (options.demo) {
        tempDir = await mkdtemp(path.join(os.tmpdir(), 'estate-demo-'));
        const dir = tempDir;
        cancelAtExit = io.atExit?.(() => rmSync(dir, { recursive: true, force: true })) ?? cancelAtExit;
        dataDir = path.join(tempDir, 'data');
        await copyDemoEstate(path.join(projectRoot(), 'fixtures', 'demo-estate'), dataDir, new Date());
      } else {
        dataDir = resolveDataDir(options.dataDir, io.env);
        assertDataDir(dataDir, io.env);
      }
      const config = loadConfig(dataDir, options.config, io.env);
      if (options.interval !== undefined && !options.collect) throw new EstateError('usage', '--interval is for --collect: the time between samples of this node');
      // The server applies collect.retention itself (a hub that only ingests prunes too), so its collector does not.
      const retentionMs = retentionOf(config);
      const collecting = options.collect ? { ...collectSettings({ interval: options.interval }, config, io.env, dataDir), retentionMs: undefined } : undefined;
      const host = options.host ?? config.serve?.host ?? '127.0.0.1';
      const port = parsePort(options.port ?? config.serve?.port ?? 8080);
      if (stopped) return;
      const ctx = createContext(dataDir, config, undefined, options.store);
      try {
        // A store that cannot be used (unreachable, schema too new or not migrated) stops the start, saying why.
        await ctx.store.ready();
        if (stopped) return;
        // Access lines, warnings and errors on stderr, redacted by createApp before they reach the sink.
        const sink = serveLogSink(io.stderr, { format: options.logFormat ?? (io.stderrIsTTY ? 'text' : 'json'), quiet: options.quiet === true });
        const envApiKey = envSettings(io.env).apiKey;
        // The hub's path runs on a throwaway data dir first, so the first batches nodes send find it compiled (src/server/warm-up.ts);
        // before this app exists, so its metrics count none of the warm-up's writes (they observe every store write of the process).
        await warmUp();
        if (stopped) return;
        const app = createApp(ctx, { envApiKey, log: sink.log });
        let running;
        try {
          running = await listen(app, { host, port, ...listenLimits(serveSettings(config)), onClientError: app.log });
        } catch (err) {
          await app.close();
          throw listenError(err, host, port);
        }
        // In one write with the URL line, so whoever waits for that line has the hint too.
        const hint = options.demo || envApiKey ? '' : await noKeyHint(ctx, io.env, options.store);
        io.stdout(`estate ${options.demo ? 'demo ' : ''}serving ${dataDir} at ${running.url}\n${hint}`);
        // Index the logs in the background now, so the first dashboard aggregates need not wait for it (reads never do).
        void Promise.all([ctx.store.completions.refresh(), ctx.store.entries.refresh()]).catch(() => {});
        if (options.demo) {
          const { key } = await ctx.store.credentials.create({ userId: 'demo', name: 'demo key' });
          io.stdout(demoBanner(running.url, key));
        }
        const collector = collecting ? startCollector(ctx, collecting, app.log) : undefined;
        const retention = retentionMs ? startRetention(ctx.store, dataDir, retentionMs, retentionLog(app.log)) : undefined;
        // The range routes' rollups: built where missing in the background, then kept current as records arrive (DESIGN.md 7b).
        const rollups = await ctx.store.series.followRollups(rollupsLog(app.log));
        // The providers, probed and the probes stored, so /events derives provider_down and provider_recovered (providers_probe_s; off at 0).
        const prober = config.providers.length && config.providers_probe_s ? await startProbes(ctx, config.providers_probe_s * 1000, app.log) : undefined;
        // The watched events stored when they happen (DESIGN.md 3, 7c): /events keeps them, and the webhooks are sent from them.
        const recorder = await startRecorder(ctx, app.log);
        // Webhooks: the stored events enqueued in the store's outbox and delivered in the background (docs/notify.md).
        const notify = ctx.config.notify.length ? await startNotify(ctx, app.log) : undefined;
        const signal = await io.onStop();
        io.stderr(`estate: ${signal} received, draining requests\n`);
        // The sample and the prune in progress are finished (never a torn line) before the store closes.
        await collector?.stop();
        await retention?.stop();
        await rollups.stop();
        await prober?.stop();
        await recorder.stop();
        // Attempts in flight are cut short and tried again at the next start, with the same webhook-id.
        await notify?.stop();
        await app.closeStreams();
        await running.close();
        await app.close();
        sink.flush();
      } finally {
        await ctx.store.close();
      }
    } finally {
      cancelAtExit();
      if (tempDir) await rm(tempDir, { recursive: true, force: true });
    }
  });
  return cmd;
}

/**
 * `--collect`: the collector of `estate collect`, run in the server on the
 * served store until `stop`. Its failures are warnings in the server's log;
 * when the first sample fails the collector stops there, and the server goes
 * on serving what it has. Samples are not logged.
 */
function startCollector(ctx: EstateContext, settings: CollectorSettings, log: (line: Record<string, unknown>) => void): { stop: () => Promise<void> } {
  const stopping = new AbortController();
  const warn = (event: string, err: unknown) => log({ level: 'warn', time: new Date().toISOString(), event, error: String((err as Error)?.message ?? err) });
  const done = import('../../core/collect/collect-loop.ts')
    .then(({ runCollector }) =>
      runCollector(ctx.store, settings, stopping.signal, {
        sampled: (recorded) => {
          if (recorded.heartbeatProblem) warn('collect_heartbeat_left_alone', recorded.heartbeatProblem);
        },
        failed: (err) => warn('collect_failed', err),
      }),
    )
    .catch((err: unknown) => warn('collect_failed', err));
  return {
    stop: async () => {
      stopping.abort();
      await done;
    },
  };
}

/** The providers' probes of `estate serve` (core/probes/probe-providers.ts); a round that could not be stored is logged as `provider_probe_failed`. */
async function startProbes(ctx: EstateContext, intervalMs: number, log: (line: Record<string, unknown>) => void) {
  const { startProviderProbes } = await import('../../core/probes/probe-providers.ts');
  return startProviderProbes(ctx.config.providers, ctx.store.probes, intervalMs, ctx.now, {
    failed: (err) => log({ level: 'warn', time: new Date().toISOString(), event: 'provider_probe_failed', error: String((err as Error)?.message ?? err) }),
  });
}

/**
 * The event recorder (src/core/events/event-recorder.ts) on the served
 * store, until `stop`. Its log lines: `events_recorded` (how many new), and
 * warnings for a pass that failed or could not read an input.
 */
async function startRecorder(ctx: EstateContext, log: (line: Record<string, unknown>) => void) {
  const { startEventRecorder } = await import('../../core/events/event-recorder.ts');
  const time = () => new Date().toISOString();
  const every = ctx.config.events.watch_every ?? ctx.config.notify_scan;
  return startEventRecorder(
    {
      dataDir: ctx.dataDir,
      store: ctx.store,
      staleAfterS: ctx.config.events.stale_after_s,
      watch: eventWatch(ctx.config),
      everyMs: parseDuration(every, 'events.watch_every'),
      keepMs: parseDuration(ctx.config.events.retention, 'events.retention'),
      keepWindows: ctx.store.kind === 'data-dir',
      now: ctx.now,
    },
    {
      recorded: (count) => log({ level: 'info', time: time(), event: 'events_recorded', count }),
      failed: (event, err) => log({ level: 'warn', time: time(), event, error: String((err as Error)?.message ?? err) }),
    },
  );
}

/**
 * The webhook dispatcher (src/core/notify/notify-dispatcher.ts) on the
 * served store, until `stop`. Its log lines: `notify_enqueued`,
 * `notify_attempt` (target, type, webhook-id, status, what the receiver
 * answered; never the URL or the secret), warnings for a failed pass.
 */
async function startNotify(ctx: EstateContext, log: (line: Record<string, unknown>) => void): Promise<{ stop: () => Promise<void> }> {
  const { startNotifyDispatcher } = await import('../../core/notify/notify-dispatcher.ts');
  const time = () => new Date().toISOString();
  return startNotifyDispatcher(
    {
      store: ctx.store,
      targets: ctx.config.notify,
      secrets: ctx.sources.secrets.notify,
      catchUpMs: parseDuration(ctx.config.notify_catch_up, 'notify_catch_up'),
      startedAt: ctx.startedAt,
      now: ctx.now,
    },
    {
      enqueued: (count) => log({ level: 'info', time: time(), event: 'notify_enqueued', count }),
      attempted: (d, attempt, result) =>
        log({
          level: result.status === 'failed' ? 'warn' : 'info',
          time: time(),
          event: 'notify_attempt',
          target: d.target,
          type: d.type,
          webhook_id: d.id,
          status: result.status,
          http_status: attempt.http_status,
          ...(attempt.error === null ? {} : { error: attempt.error }),
          ...(result.status === 'pending' ? { next_attempt_at: result.next_at } : {}),
        }),
      failed: (event, err) => log({ level: 'warn', time: time(), event, error: String((err as Error)?.message ?? err) }),
    },
  );
}

/**
 * How the server's retention is logged: `collect_pruned` with what each
 * series dropped when a pass dropped records, `collect_prune_failed` (a
 * warning) when one failed; the next check tries again.
 */
function rollupsLog(log: (line: Record<string, unknown>) => void): RollupReport {
  return {
    folded: () => {},
    failed: (series, err) => log({ level: 'warn', time: new Date().toISOString(), event: 'rollups_failed', series, error: String((err as Error)?.message ?? err) }),
  };
}

function retentionLog(log: (line: Record<string, unknown>) => void): RetentionReport {
  return {
    pruned: (counts) => log({ level: 'info', time: new Date().toISOString(), event: 'collect_pruned', dropped: Object.fromEntries(Object.entries(counts).map(([name, c]) => [name, c.removed])) }),
    failed: (err) => log({ level: 'warn', time: new Date().toISOString(), event: 'collect_prune_failed', error: String((err as Error)?.message ?? err) }),
  };
}

/**
 * A line saying how to make the first API key when the store has none (a
 * fresh data dir): until then every protected route answers 403. Nothing
 * when there is one, or when the store cannot be read (/readyz says so).
 */
async function noKeyHint(ctx: EstateContext, env: NodeJS.ProcessEnv, storeFlag: string | undefined): Promise<string> {
  const live = await liveKeyCount(ctx.store.credentials, ctx.now()).catch(() => undefined);
  if (live !== 0) return '';
  return `no API key yet: protected routes answer 403 until one exists; create one with: ${keysCreateHint(ctx.dataDir, env, storeFlag)}\n`;
}

/** What the demo prints on stdout under its first line: the key, the pages, and a curl line to paste into a POSIX shell. */
function demoBanner(url: string, key: string): string {
  return [
    `demo key (user "demo"): ${key}`,
    `  dashboard:   ${url}/dashboard  (paste the key once, top right)`,
    `  status page: ${url}/status`,
    `  work board:  ${url}/hq/work`,
    `  API docs:    ${url}/api/docs`,
    `  try: curl -H ${shellQuote(`X-API-Key: ${key}`)} ${shellQuote(`${url}/trends?limit=5`)}`,
    '',
  ].join('\n');
}

function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Why the server could not listen, in words that say what to do (exit 1). */
function listenError(err: unknown, host: string, port: number): EstateError {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'EADDRINUSE') return new EstateError('io', `port ${port} on ${host} is already in use: pass --port 0 to pick a free port, or another --port`);
  if (code === 'EACCES') {
    const why = port > 0 && port < 1024 ? ' (ports below 1024 need privileges)' : '';
    return new EstateError('io', `not allowed to listen on ${host}:${port}${why}: pass --port 0 to pick a free port, or a port above 1023`);
  }
  if (code === 'EADDRNOTAVAIL') return new EstateError('io', `cannot listen on ${host}: it is not an address of this machine; pass another --host`);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new EstateError('io', `cannot listen on ${host}: no such host; pass another --host`);
  return new EstateError('io', `cannot listen on ${host}:${port}: ${(err as Error)?.message ?? String(err)}`);
}

function parsePort(value: string | number): number {
  const port = typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new EstateError('usage', `invalid --port ${value}: use 0-65535`);
  return port;
}
