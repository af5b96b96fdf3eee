import { statSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Command } from 'commander';
import { assertDataDir, type EstateConfig, loadConfig, nodeName, resolveDataDir, resolveStoreSpec } from '../../config.ts';
import { DEFAULT_THRESHOLDS, type Thresholds } from '../../core/collect/sample-types.ts';
import { parseDuration } from '../../core/duration.ts';
import { EstateError } from '../../errors.ts';
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
}

const DEFAULT_INTERVAL = '60s';

export function collectCommand(io: CliIO): Command {
  return addDataDirOptions(
    new Command('collect').description('Sample this node (CPU, memory, load, network and disk I/O, file systems) and append it to the series: trends, disk, pulse, the heartbeat'),
  )
    .option('--once', 'take one sample, append it, and exit')
    .option('--interval <duration>', `without --once: sample every DURATION, like 30s or 5m (default: collect.interval in the config, else ${DEFAULT_INTERVAL})`)
    .option('--node <name>', 'the node name of the samples (default: node_name in the config, else the host name)')
    .option('--host-prefix <dir>', "read the host whose root file system is mounted at DIR (from a container run with -v /:/host:ro; default: $ESTATE_HOST_PREFIX, else collect.host_prefix)")
    .option('--json', 'print what each sample wrote: {"trend", "disks", "pulse", "heartbeat"?, "heartbeat_problem"?, "missing"} (one line per sample without --once)')
    .addHelpText(
      'after',
      '\nWithout --once it samples until SIGTERM or SIGINT, then finishes the sample in\n' +
        'progress and exits 0. The counters for rates (network, disk I/O) are kept in\n' +
        'the data dir (collect/counters-NODE.json), so cron runs of --once have rates too.\n' +
        '\nExamples:\n  $ estate collect --once\n  $ estate collect --interval 30s\n  $ estate collect --once --host-prefix /host --node web-1 --json\n' +
        '\nFrom cron, every minute (a crontab line):\n  */1 * * * * estate collect --once\n',
    )
    .action(async (options: CollectOptions) => {
      if (options.interval !== undefined) parseDuration(options.interval, '--interval');
      const dataDir = resolveDataDir(options.dataDir, io.env);
      assertDataDir(dataDir, io.env);
      const config = loadConfig(dataDir, options.config, io.env);
      const intervalMs = intervalOf(options.interval, config);
      const node = options.node ?? nodeName(config);
      if (node.trim() === '') throw new EstateError('usage', '--node: a node name cannot be empty');
      const root = hostRoot(options.hostPrefix ?? io.env.ESTATE_HOST_PREFIX ?? config.collect?.host_prefix);
      const thresholds = mergedThresholds(config);
      const [{ openStore }, { recordSample }] = await Promise.all([import('../../core/store/open-store.ts'), import('../../core/collect/record-sample.ts')]);
      const store = openStore(resolveStoreSpec(options.store, config, io.env), { dataDir, config, env: io.env });
      const once = async (): Promise<void> => {
        const recorded = await recordSample(store, { node, root, thresholds, dataDir });
        if (recorded.heartbeatProblem) io.stderr(`estate collect: ${escapeControls(recorded.heartbeatProblem)}\n`);
        if (options.json) {
          const { heartbeatProblem, ...rest } = recorded;
          const out = heartbeatProblem === undefined ? rest : { ...rest, heartbeat_problem: heartbeatProblem };
          io.stdout(`${options.once ? JSON.stringify(out, null, 2) : JSON.stringify(out)}\n`);
        } else {
          const missing = recorded.missing.length ? `; not read: ${recorded.missing.join(', ')}` : '';
          const heartbeat = recorded.heartbeat ? 'heartbeat merged' : 'heartbeat left alone';
          io.stdout(escapeControls(`${recorded.trend.ts} ${node}: ${recorded.pulse.status}; 1 trend point, ${recorded.disks.length} disk snapshot${recorded.disks.length === 1 ? '' : 's'}, 1 pulse entry, ${heartbeat}${missing}`) + '\n');
        }
      };
      try {
        if (options.once) return await once();
        const stopping = new AbortController();
        void io.onStop().then(() => stopping.abort());
        await once();
        while (!stopping.signal.aborted) {
          try {
            await sleep(intervalMs, undefined, { signal: stopping.signal });
          } catch {
            break;
          }
          try {
            await once();
          } catch (err) {
            // The first sample's failure ends the command; a later one (a lock held too long, a full disk) is reported and the next sample tried.
            io.stderr(`estate collect: ${escapeControls((err as Error).message)}\n`);
          }
        }
      } finally {
        await store.close();
      }
    });
}

/** The time between samples: `--interval`, else `collect.interval`, else 60s. */
function intervalOf(flag: string | undefined, config: EstateConfig): number {
  if (flag !== undefined) return parseDuration(flag, '--interval');
  const configured = config.collect?.interval;
  return parseDuration(configured ?? DEFAULT_INTERVAL, 'collect.interval');
}

/** The root the kernel figures are read under: `/`, or the host prefix, which must be a directory. */
function hostRoot(prefix: string | undefined): string {
  if (prefix === undefined || prefix === '') return '/';
  const dir = path.resolve(prefix);
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new EstateError('usage', `host prefix ${dir} is not a directory (--host-prefix, $ESTATE_HOST_PREFIX or collect.host_prefix: where the host's root is mounted)`);
  return dir;
}

/** `collect.thresholds` of the config, each bound over its default. */
function mergedThresholds(config: EstateConfig): Thresholds {
  const own = config.collect?.thresholds ?? {};
  const merged = {} as Thresholds;
  for (const name of Object.keys(DEFAULT_THRESHOLDS) as (keyof Thresholds)[]) {
    merged[name] = { ...DEFAULT_THRESHOLDS[name], ...stripUndefined(own[name] ?? {}) };
    if (merged[name].unhealthy < merged[name].degraded) {
      throw new EstateError('usage', `collect.thresholds.${name}: unhealthy (${merged[name].unhealthy}) is below degraded (${merged[name].degraded})`);
    }
  }
  return merged;
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
