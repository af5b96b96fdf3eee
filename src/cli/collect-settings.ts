import { statSync } from 'node:fs';
import path from 'node:path';
import { type EstateConfig, nodeName } from '../config.ts';
import { DEFAULT_THRESHOLDS, type Thresholds } from '../core/collect/sample-types.ts';
import type { CollectorSettings } from '../core/collect/collect-loop.ts';
import { parseDuration } from '../core/duration.ts';
import { EstateError } from '../errors.ts';

const DEFAULT_INTERVAL = '60s';
/** `collect.spool_max_bytes` when the config says nothing (DESIGN.md 7a). */
export const DEFAULT_SPOOL_MAX_BYTES = 64 * 1024 * 1024;

/** What `estate collect` and `estate serve --collect` read their collector's settings from. */
export interface CollectFlags {
  node?: string;
  interval?: string;
  hostPrefix?: string;
}

/**
 * The collector's settings from the flags, else the environment
 * (`ESTATE_HOST_PREFIX`), else the config's `collect` section, else the
 * defaults (with `collect.retention` and `collect.spool_max_bytes`); a usage error (exit 2) for a bad interval, an empty node name, a
 * host prefix that is not a directory, or thresholds out of order.
 */
export function collectSettings(flags: CollectFlags, config: EstateConfig, env: NodeJS.ProcessEnv, dataDir: string): CollectorSettings {
  const intervalMs = intervalOf(flags.interval, config);
  const node = flags.node ?? nodeName(config);
  if (node.trim() === '') throw new EstateError('usage', '--node: a node name cannot be empty');
  const root = hostRoot(flags.hostPrefix ?? env.ESTATE_HOST_PREFIX ?? config.collect?.host_prefix);
  return {
    node,
    root,
    thresholds: mergedThresholds(config),
    dataDir,
    intervalMs,
    retentionMs: retentionOf(config),
    spoolMaxBytes: config.collect?.spool_max_bytes ?? DEFAULT_SPOOL_MAX_BYTES,
  };
}

/** `collect.retention` in ms, or undefined when the config sets none; a usage error (exit 2) for a bad duration. */
export function retentionOf(config: EstateConfig): number | undefined {
  const retention = config.collect?.retention;
  return retention === undefined ? undefined : parseDuration(retention, 'collect.retention');
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

export { DEFAULT_INTERVAL };
