import { Command } from 'commander';
import { assertDataDir, loadConfig, resolveDataDir, resolveStoreSpec } from '../../config.ts';
import type { RecordedSample } from '../../core/collect/record-sample.ts';
import { parseDuration } from '../../core/duration.ts';
import { collectSettings, DEFAULT_INTERVAL } from '../collect-settings.ts';
import { collectTarget } from '../collect-target.ts';
import { keepCollectorLight } from '../collector-v8-settings.ts';
import { collectToHub } from './collect-to-hub.ts';
import { addDataDirOptions } from '../common-options.ts';
import type { CliIO } from '../io.ts';
import { escapeControls } from '../safe-text.ts';

interface CollectOptions {
  once?: boolean;
  node?: string;
  interval?: string;
  hostPrefix?: string;
  json?: boolean;
  dataDir?: string;
  config?: string;
  store?: string;
  url?: string;
  apiKey?: string;
  context?: string;
}


export function collectCommand(io: CliIO): Command {
  return addDataDirOptions(
    new Command('collect').description('Sample this node (CPU, memory, load, network and disk I/O, file systems) and append it to the series: trends, disk, pulse, the heartbeat'),
  )
    .option('--once', 'take one sample, append it, and exit')
    .option('--interval <duration>', `without --once: sample every DURATION, like 30s or 5m (default: collect.interval in the config, else ${DEFAULT_INTERVAL})`)
    .option('--node <name>', 'the node name of the samples (default: node_name in the config, else the host name)')
    .option('--host-prefix <dir>', "read the host whose root file system is mounted at DIR (from a container run with -v /:/host:ro; default: $ESTATE_HOST_PREFIX, else collect.host_prefix)")
    .option('--url <url>', "send the samples to this hub's POST /ingest instead of the local series, through a spool in the data dir (default: $ESTATE_URL)")
    .option('--api-key <key>', 'credential for --url: a key of scope ingest (or write) (default: $ESTATE_API_KEY)')
    .option('--context <name>', 'send to the server of this context (see estate context; default: $ESTATE_CONTEXT, else the current one)')
    .option('--json', 'print what each sample wrote: {"trend", "disks", "pulse", "heartbeat"?, "heartbeat_problem"?, "missing"} (one line per sample without --once)')
    .addHelpText(
      'after',
      '\nWithout --once it samples until SIGTERM or SIGINT, then finishes the sample in\n' +
        'progress and exits 0. The counters for rates (network, disk I/O) are kept in\n' +
        'the data dir (collect/counters-NODE.json), so cron runs of --once have rates too.\n' +
        '\nExamples:\n  $ estate collect --once\n  $ estate collect --interval 30s\n  $ estate collect --once --host-prefix /host --node web-1 --json\n' +
        '\nFrom cron, every minute (a crontab line):\n  */1 * * * * estate collect --once\n' +
        '\nWith --url (or a context) the samples go to a hub. Each one is first appended to\n' +
        'the spool in the data dir (collect/spool-NODE.jsonl; the data dir is created if\n' +
        'missing), then sent oldest first; it leaves the spool once the hub answers 2xx.\n' +
        'While the hub is unreachable or answers 429 or 5xx the samples wait, retried\n' +
        'within 15 s; past collect.spool_max_bytes (default 64 MiB) the oldest are\n' +
        'dropped and said. A sample the hub refuses (422) is dropped and said; a refused\n' +
        'key (401, 403) keeps them all. --once --url exits 0 when the hub cannot take\n' +
        'them now (one line on stderr): they go with the next run.\n' +
        '\nWith collect.retention in the config, records older than it are pruned from\n' +
        'the series at most once an hour (as estate prune does), in the data dir or the\n' +
        'PostgreSQL store they are written to.\n',
    )
    .action(async (options: CollectOptions) => {
      if (options.interval !== undefined) parseDuration(options.interval, '--interval');
      const target = collectTarget(options, io.env);
      const dataDir = resolveDataDir(options.dataDir, io.env);
      // A collector that sends to a hub makes its data dir on first use (collectToHub); one that writes the series needs an estate.
      if (!target) assertDataDir(dataDir, io.env);
      const config = loadConfig(dataDir, options.config, io.env);
      const settings = collectSettings(options, config, io.env, dataDir);
      if (target) return collectToHub(io, { target, settings, once: options.once === true, json: options.json === true });
      const [{ openStore }, { recordSample }, { runCollector, pruneIfDue }] = await Promise.all([
        import('../../core/store/open-store.ts'),
        import('../../core/collect/record-sample.ts'),
        import('../../core/collect/collect-loop.ts'),
      ]);
      const store = openStore(resolveStoreSpec(options.store, config, io.env), { dataDir, config, env: io.env });
      const print = (recorded: RecordedSample): void => {
        if (recorded.heartbeatProblem) io.stderr(`estate collect: ${escapeControls(recorded.heartbeatProblem)}\n`);
        if (options.json) {
          const { heartbeatProblem, ...rest } = recorded;
          const out = heartbeatProblem === undefined ? rest : { ...rest, heartbeat_problem: heartbeatProblem };
          io.stdout(`${options.once ? JSON.stringify(out, null, 2) : JSON.stringify(out)}\n`);
        } else {
          const missing = recorded.missing.length ? `; not read: ${recorded.missing.join(', ')}` : '';
          const heartbeat = recorded.heartbeat ? 'heartbeat merged' : 'heartbeat left alone';
          io.stdout(escapeControls(`${recorded.trend.ts} ${settings.node}: ${recorded.pulse.status}; 1 trend point, ${recorded.disks.length} disk snapshot${recorded.disks.length === 1 ? '' : 's'}, 1 pulse entry, ${heartbeat}${missing}`) + '\n');
        }
      };
      const failed = (err: unknown) => io.stderr(`estate collect: ${escapeControls((err as Error).message)}\n`);
      try {
        if (options.once) {
          const { intervalMs: _i, retentionMs: _r, spoolMaxBytes: _s, ...once } = settings;
          print(await recordSample(store, once));
          return await pruneIfDue(store, settings, { failed });
        }
        keepCollectorLight(process.execArgv, io.env.NODE_OPTIONS);
        const stopping = new AbortController();
        void io.onStop().then(() => stopping.abort());
        await runCollector(store, settings, stopping.signal, {
          sampled: print,
          failed,
        });
      } finally {
        await store.close();
      }
    });
}
