import { readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { type CheckedConfigCache, checkedConfigCache, checkedConfigCacheFile } from './checked-config-cache.ts';
import { EstateError } from './errors.ts';
import { shellWord } from './shell-word.ts';
import { parseDuration } from './core/duration.ts';
import { readSchedule } from './core/schedules/schedule-spec.ts';
import { WATCHED_KINDS } from './core/notify/outbox-types.ts';
import { isNotFound } from './core/fs-errors.ts';
import { readDataFileSync } from './core/open-data-file.ts';
import { MAX_RUNS_ANSWER_BYTES, RUN_FIELDS_BYTES, worstRunsAnswerBytes } from './core/training-answer-bound.ts';

// Settings come from flags > environment > config file > defaults. This is
// the only module (with the CLI entry) that reads the environment.

export const DEFAULT_FORGE_TOKEN_ENV = 'FORGEJO_TOKEN';
export const DEFAULT_FORGE_MAX_BYTES = 16 * 1024 * 1024;

/** `build()` on the first call, the same value after. */
function once<T>(build: () => T): () => T {
  let value: T | undefined;
  let built = false;
  return () => {
    if (!built) {
      value = build();
      built = true;
    }
    return value as T;
  };
}

const httpUrl = once(() => z.url({ protocol: /^https?$/ }));
/** A URL estate calls: secrets never sit in it (they come from environment variables). */
const sourceUrl = once(() =>
  httpUrl().refine((u) => !/^[a-z]+:\/\/[^/?#]*@/i.test(u), {
    message: 'must not contain credentials (name an environment variable that holds them instead)',
  }),
);
const envName = () => z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/);
const timeoutMs = () => z.int().min(1).max(600_000);
const cacheS = () => z.int().min(0).max(86_400);

const providerSchema = () =>
  z.strictObject({
    name: z.string().min(1).max(100),
    url: sourceUrl(),
    timeout_ms: timeoutMs().default(3000),
    expect_status: z.int().min(100).max(599).optional(),
  });

/** An origin as browsers send it: scheme, host and optional port; no path, no trailing slash. */
const corsOrigin = () =>
  z.string().regex(/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$|^https?:\/\/\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/, {
    message: 'must be an origin such as https://dash.example.org (scheme, host and port only)',
  });

/**
 * Requests per client: a token bucket of `burst` requests that refills at
 * `requests_per_minute`, one per credential (API key or token user) when the
 * request carries a valid one, else one per client address. A request takes
 * one token, and its answer one more per `bytes_per_token` bytes past the
 * first. Loopback clients are exempt unless `exempt_loopback` is false (set
 * it when a reverse proxy on the same host forwards every client).
 */
export const rateLimitSchema = once(() =>
  z.strictObject({
    enabled: z.boolean().default(true),
    requests_per_minute: z.int().min(1).max(1_000_000).default(600),
    burst: z.int().min(1).max(100_000).default(120),
    bytes_per_token: z.int().min(1024).max(1024 ** 3).default(64 * 1024),
    exempt_loopback: z.boolean().default(true),
  }),
);

/**
 * Routes that ask external sources or gather many (stats, providers, forge,
 * summary, garden, agents, the work feed) run at most `max_concurrent` at
 * once, at most `per_client` of one client's; up to `max_queued` more wait,
 * at most `max_wait_ms`, at most `per_client_queued` of one client's, and
 * free slots go to the waiting clients in turn. One more of a client's is
 * 429, beyond the rest 503, both with Retry-After.
 */
const expensiveRoutesSchema = () =>
  z.strictObject({
    max_concurrent: z.int().min(1).max(1000).default(8),
    max_queued: z.int().min(0).max(10_000).default(64),
    max_wait_ms: z.int().min(1).max(600_000).default(15_000),
    per_client: z.int().min(1).max(1000).default(2),
    per_client_queued: z.int().min(0).max(10_000).default(32),
  });

/**
 * How long a client may take to send its headers, its whole request, and how
 * long an idle keep-alive connection stays open; how long an answer may wait
 * for its client to take it (`send_ms`) before its connection is cut.
 */
const serveTimeoutsSchema = () =>
  z
    .strictObject({
      headers_ms: z.int().min(100).max(600_000).default(10_000),
      request_ms: z.int().min(100).max(3_600_000).default(30_000),
      keep_alive_ms: z.int().min(100).max(600_000).default(5_000),
      send_ms: z.int().min(100).max(3_600_000).default(30_000),
    })
    .refine((t) => t.headers_ms <= t.request_ms, { message: 'headers_ms must not be more than request_ms', path: ['headers_ms'] });

/**
 * `GET /work/stream`: at most `per_client` open streams per client (its
 * credential when it presents a valid one, else its address); each ends after
 * `max_lifetime_s` and the client reconnects with `Last-Event-ID`; the
 * server holds at most `max_open` streams in all (one more is 503).
 */
const workStreamsSchema = () =>
  z.strictObject({
    per_client: z.int().min(1).max(10_000).default(8),
    max_open: z.int().min(1).max(100_000).default(200),
    max_lifetime_s: z.int().min(1).max(7 * 86_400).default(3600),
  });

/**
 * Quotas of training runs: runs per user, and bytes of `params` per run (as
 * compact JSON, UTF-8). Together they bound one user's `GET /training/runs`
 * to MAX_RUNS_ANSWER_BYTES (training-answer-bound.ts).
 */
const trainingSchema = () =>
  z
    .strictObject({
      max_runs_per_user: z.int().min(1).max(1_000_000).default(1000),
      max_params_bytes: z.int().min(2).max(1024 * 1024).default(10 * 1024),
    })
    .refine((t) => worstRunsAnswerBytes(t.max_runs_per_user, t.max_params_bytes) <= MAX_RUNS_ANSWER_BYTES, {
      path: ['max_params_bytes'],
      message:
        `max_runs_per_user × (max_params_bytes + ${RUN_FIELDS_BYTES}) must be at most ${MAX_RUNS_ANSWER_BYTES} bytes ` +
        `(16 MiB: one user's runs are listed in one answer); lower either`,
    });

/** `estate serve`'s settings; every key has a default. */
const serveSchema = once(() =>
  z.strictObject({
    host: z.string().min(1).optional(),
    port: z.int().min(0).max(65_535).optional(),
    /** Origins (`https://dash.example.org`) whose pages may call the API from a browser; none by default. */
    cors_origins: z.array(corsOrigin()).max(100).default([]),
    rate_limit: rateLimitSchema().prefault({}),
    expensive_routes: expensiveRoutesSchema().prefault({}),
    timeouts: serveTimeoutsSchema().prefault({}),
    /** Open connections beyond this are refused at once. */
    max_connections: z.int().min(1).max(100_000).default(1024),
    /** Bytes of answers written but not yet taken by their clients, all connections together; past it, a large answer is 503. */
    max_unsent_bytes: z.int().min(64 * 1024).max(1024 ** 3).default(64 * 1024 * 1024),
    /** The same bytes of one client's answers; past it, that client's large answer is 429. */
    max_unsent_bytes_per_client: z.int().min(64 * 1024).max(1024 ** 3).default(8 * 1024 * 1024),
    streams: workStreamsSchema().prefault({}),
  }),
);

/**
 * `store`: `data-dir`, or a `postgres://` / `postgresql://` URL without a
 * password (the password comes from PGPASSWORD or a PGPASSFILE, never from
 * this file).
 */
const storeSpec = () =>
  z
    .string()
    .max(2000)
    .superRefine((spec, ctx) => {
      if (spec === 'data-dir') return;
      let url: URL | undefined;
      try {
        url = /^postgres(ql)?:\/\//i.test(spec) ? new URL(spec) : undefined;
      } catch {
        url = undefined;
      }
      if (!url) ctx.addIssue({ code: 'custom', message: 'use a postgres:// or postgresql:// URL, or data-dir' });
      else if (url.password || /(^|&)password=/i.test(url.search.slice(1))) {
        ctx.addIssue({ code: 'custom', message: 'the URL must not hold a password: set PGPASSWORD or use a PGPASSFILE' });
      }
    });

/**
 * The config file's top-level keys, each with its schema (built at its
 * first use). A file is checked a section at a time: a command pays only for the sections
 * its file has (the rest come from the defaults), and `serve`, the largest,
 * is built only where it is written or served.
 */
const SECTIONS = {
  /** Where estate keeps what it writes (keyed logs, training runs, keys, token secret): see resolveStoreSpec. */
  store: once(() => storeSpec().optional()),
  node_name: once(() => z.string().min(1).max(200).optional()),
  forge: once(() =>
    z
      .strictObject({
        /** Base URL of the forge (not its /api/v1). */
        url: sourceUrl(),
        /** The environment variable that holds the forge's access token. */
        token_env: envName().default(DEFAULT_FORGE_TOKEN_ENV),
        /** Bounds each request to the forge; a paginated listing as a whole gets three times this. */
        timeout_ms: timeoutMs().default(5000),
        cache_s: cacheS().default(30),
        /** Bounds the bytes read for one call: each answer, and a paginated listing's answers in all (502 past it). */
        max_bytes: z.int().min(1024).max(1024 ** 3).default(DEFAULT_FORGE_MAX_BYTES),
      })
      .optional()),
  providers: once(() =>
    z
      .array(providerSchema())
      .max(100)
      .default([])
      .superRefine(...uniqueNames('provider'))),
  providers_cache_s: once(() => cacheS().default(60)),
  /** How often `estate serve` probes each provider and stores the probe (provider_down / provider_recovered in /events), in seconds; 0: never. */
  providers_probe_s: once(() => z.int().min(0).max(86_400).default(30)),
  stats: once(() =>
    z
      .strictObject({
        /** argv, never a shell string; a relative program path resolves against the data dir (also the working directory). */
        command: z.array(z.string().min(1).max(4096)).min(1).max(100),
        timeout_ms: timeoutMs().default(10_000),
        cache_s: cacheS().default(300),
      })
      .optional()),
  identity: once(() =>
    z
      .strictObject({
        name: z.string().max(200).optional(),
        tagline: z.string().max(500).optional(),
        links: z.array(z.strictObject({ label: z.string().max(200), url: httpUrl() })).max(50).default([]),
      })
      .optional()),
  events: once(() =>
    z
      .strictObject({
        stale_after_s: z.int().min(1).max(30 * 86_400).default(900),
        /**
         * How often `estate serve` derives the watched events and stores the new ones (DESIGN.md 3, 7c): each pass costs
         * what a read of /events costs (on a hub of 100 nodes about 0.2 s), so not every second; a duration from 1s to 10m.
         * Default: notify_scan (its older name), else 10s.
         */
        watch_every: z
          .string()
          .refine((t) => isDuration(t) && parseDuration(t, 'events.watch_every') >= 1000 && parseDuration(t, 'events.watch_every') <= 600_000, 'a whole number and a unit, like 10s or 1m, from 1s to 10m')
          .optional(),
        /** How long the stored events are kept (by their `ts`): a duration, default 90d; `estate serve` removes the older ones hourly. */
        retention: z.string().refine((t) => isDuration(t) && parseDuration(t, 'events.retention') >= 3_600_000, 'a whole number and a unit, like 90d or 12h, at least 1h').default('90d'),
      })
      .prefault({})),
  alerts: once(() =>
    z
      .strictObject({
        /** How long a pulse or provider condition (degraded, unhealthy, down, and back) must hold before its event fires (DESIGN.md 7c): a duration, default 1m; 0s fires on the first entry. */
        hold: z
          .string()
          .refine((t) => t === '0s' || isDuration(t), 'a whole number and a unit, like 1m or 30s (0s: at once), at most 3650d')
          .default('1m'),
      })
      .prefault({})),
  schedules: once(() =>
    z
      .array(scheduleSchema())
      .max(200)
      .default([])
      .superRefine(...uniqueNames('schedule'))),
  notify: once(() =>
    z
      .array(notifyTargetSchema())
      .max(50)
      .default([])
      .superRefine(...uniqueNames('notify target'))),
  /** How far back a dispatcher starting (or restarting) looks for events it has not enqueued yet (docs/notify.md): a duration, default 1h, at most 7d. */
  notify_catch_up: once(() =>
    z
      .string()
      .refine((t) => isDuration(t) && parseDuration(t, 'notify_catch_up') <= 7 * 86_400_000, 'a whole number and a unit, like 1h or 30m, at most 7d')
      .default('1h')),
  /** The older name of `events.watch_every` (which wins when both are set): how often the watched events are derived and the new ones stored; default 10s. */
  notify_scan: once(() =>
    z
      .string()
      .refine((t) => isDuration(t) && parseDuration(t, 'notify_scan') >= 1000 && parseDuration(t, 'notify_scan') <= 600_000, 'a whole number and a unit, like 10s or 1m, from 1s to 10m')
      .default('10s')),
  collect: once(() =>
    z
      .strictObject({
        /** How long the series logs keep their records (`estate prune`'s default --older-than; the collector's retention): a duration such as 30d. */
        retention: z.string().refine(isDuration, 'a whole number and a unit, like 30d or 12h, at most 3650d').optional(),
        /** How often `estate collect` samples without --once: a duration such as 60s (the default). */
        interval: z.string().refine(isDuration, 'a whole number and a unit, like 60s or 5m, at most 3650d').optional(),
        /** The bound of the spool of a collector sending to a hub (`estate collect --url`), in bytes: past it the oldest unsent samples are dropped. Default 64 MiB. */
        spool_max_bytes: z.int().min(4096).max(2 ** 40).optional(),
        /** Where the host's root file system is mounted when collecting from a container (`--host-prefix`). */
        host_prefix: z.string().min(1).max(4096).optional(),
        /** The pulse thresholds, each over its default (DESIGN.md 7a): a value at or above one takes that status. */
        thresholds: z
          .strictObject({
            disk_used_pct: thresholdSchema().optional(),
            mem_used_pct: thresholdSchema().optional(),
            load_per_core: thresholdSchema().optional(),
          })
          .optional(),
      })
      .optional()),
  rollups: once(() =>
    z
      .strictObject({
        /** How long each rollup tier of the range routes (DESIGN.md 7b) keeps its buckets: durations, defaults 30d (1m) and 400d (1h). */
        retention: z
          .strictObject({
            '1m': z.string().refine(isDuration, 'a whole number and a unit, like 30d, at most 3650d').optional(),
            '1h': z.string().refine(isDuration, 'a whole number and a unit, like 400d, at most 3650d').optional(),
          })
          .optional(),
      })
      .optional()),
  training: once(() => trainingSchema().prefault({})),
  serve: once(() => serveSchema().optional()),
};

/**
 * The arguments of a list's superRefine that refuses two entries of one
 * `name` (`duplicate provider name "x"` at the second). Runs even when some
 * entry is invalid (`when`), so every problem is reported at once.
 */
function uniqueNames(what: string) {
  return [
    (entries: readonly ({ name?: unknown } | null)[], ctx: z.RefinementCtx) => {
      const seen = new Set<unknown>();
      entries.forEach((entry, i) => {
        const name = entry?.name;
        if (typeof name === 'string' && seen.has(name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `duplicate ${what} name "${name}"` });
        seen.add(name);
      });
    },
    { when: (payload: { value: unknown }) => Array.isArray(payload.value) },
  ] as const;
}

/** A schedule (DESIGN.md 7c): `every` or `cron` (with `tz`), a grace; checked as the schedules read it (schedule-spec.ts). */
const scheduleSchema = () =>
  z
    .strictObject({
      name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'lowercase letters, digits, ".", "_" and "-", at most 64, starting with a letter or digit'),
      board: z.string().min(1).max(64),
      match: z.strictObject({ task_id: z.string().min(1).max(200) }),
      every: z.string().refine(isDuration, 'a whole number and a unit, like 1d or 15m, at most 3650d').optional(),
      cron: z.string().min(1).max(200).optional(),
      tz: z.string().min(1).max(100).optional(),
      grace: z.string().refine(isDuration, 'a whole number and a unit, like 1h or 30m, at most 3650d'),
      min_runtime: z.string().refine(isDuration, 'a whole number and a unit, like 5m, at most 3650d').optional(),
      max_runtime: z.string().refine(isDuration, 'a whole number and a unit, like 2h, at most 3650d').optional(),
    })
    .superRefine((s, ctx) => {
      if ((s.every === undefined) === (s.cron === undefined)) ctx.addIssue({ code: 'custom', path: [], message: 'give exactly one of "every" and "cron"' });
      if (s.tz !== undefined && s.cron === undefined) ctx.addIssue({ code: 'custom', path: ['tz'], message: '"tz" goes with "cron"' });
      if (s.min_runtime !== undefined && s.max_runtime !== undefined && isDuration(s.min_runtime) && isDuration(s.max_runtime) && parseDuration(s.min_runtime, 'min_runtime') >= parseDuration(s.max_runtime, 'max_runtime')) {
        ctx.addIssue({ code: 'custom', path: ['min_runtime'], message: '"min_runtime" must be shorter than "max_runtime"' });
      }
      if (s.cron === undefined) return;
      const problem = cronProblem(s.cron, s.tz);
      if (problem) ctx.addIssue({ code: 'custom', path: [problem.field], message: problem.message });
    });

/**
 * A webhook target (docs/notify.md): the events of `events` (default: every
 * watched kind) are POSTed to `url`, signed as Standard Webhooks with the
 * `whsec_` secret in the environment variable `secret_env`; each attempt
 * waits at most `timeout_ms`, and a delivery is retried for `retry_for`.
 */
const notifyTargetSchema = () =>
  z.strictObject({
    name: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, 'lowercase letters, digits, ".", "_" and "-", at most 64, starting with a letter or digit'),
    url: sourceUrl(),
    events: z.array(z.enum(WATCHED_KINDS)).min(1).max(WATCHED_KINDS.length).optional(),
    secret_env: envName(),
    timeout_ms: z.int().min(100).max(60_000).default(10_000),
    retry_for: z
      .string()
      .refine((t) => isDuration(t) && parseDuration(t, 'retry_for') <= 7 * 86_400_000, 'a whole number and a unit, like 1h or 30m, at most 7d')
      .default('1h'),
  });

const thresholdSchema = () => z.strictObject({ degraded: z.number().min(0).optional(), unhealthy: z.number().min(0).optional() });

/** What is wrong with a cron pattern and time zone, as croner reads them; undefined when nothing. */
function cronProblem(pattern: string, tz: string | undefined): { field: 'cron' | 'tz'; message: string } | undefined {
  if (tz !== undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz });
    } catch {
      return { field: 'tz', message: `not an IANA time zone: "${tz}" (like Europe/Berlin or UTC)` };
    }
  }
  try {
    readSchedule({ name: 'check', board: 'check', match: { task_id: '*' }, cron: pattern, tz, grace: '1m' });
    return undefined;
  } catch (err) {
    return { field: 'cron', message: `not a cron pattern: ${(err as Error).message}` };
  }
}

function isDuration(text: string): boolean {
  try {
    parseDuration(text, 'duration');
    return true;
  } catch {
    return false;
  }
}

type Sections = typeof SECTIONS;
type SectionName = keyof Sections;

const buildConfigSchema = () => z.strictObject(Object.fromEntries(Object.keys(SECTIONS).map((name) => [name, SECTIONS[name as SectionName]()])) as { [K in SectionName]: ReturnType<Sections[K]> });

/** The whole config's schema, built at the first call (commands check a file a section at a time: parseConfig). */
export const configSchema = once(buildConfigSchema);

export type EstateConfig = z.output<ReturnType<typeof buildConfigSchema>>;
export type ForgeConfig = NonNullable<EstateConfig['forge']>;
export type ProviderConfig = EstateConfig['providers'][number];
export type StatsConfig = NonNullable<EstateConfig['stats']>;
export type ServeConfig = z.output<ReturnType<typeof serveSchema>>;
export type RateLimitConfig = z.output<ReturnType<typeof rateLimitSchema>>;
export type NotifyTargetConfig = EstateConfig['notify'][number];

export const CONFIG_FILE = 'estate.config.json';

/** The `serve` settings of a config, defaults filled in when it has none. */
export function serveSettings(config: EstateConfig): ServeConfig {
  return config.serve ?? serveSchema().parse({});
}

/** Where the data dir is: `--data-dir`, else `ESTATE_DATA_DIR`, else `$XDG_DATA_HOME/estate` (`~/.local/share/estate`). */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (flag) return path.resolve(flag);
  if (env.ESTATE_DATA_DIR) return path.resolve(env.ESTATE_DATA_DIR);
  return defaultDataDir(env);
}

/** The data dir when neither `--data-dir` nor `ESTATE_DATA_DIR` names one: `$XDG_DATA_HOME/estate` (`~/.local/share/estate`). */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_DATA_HOME && path.isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : path.join(os.homedir(), '.local', 'share');
  return path.join(xdg, 'estate');
}

/**
 * ` --data-dir DIR` when a command run with `env` needs it to reach `dir`,
 * else '' (`dir` is where commands look without it): what the commands
 * estate suggests add, so they reach the data dir they are about.
 */
export function dataDirOption(dir: string, env: NodeJS.ProcessEnv = process.env): string {
  return resolveDataDir(undefined, env) === dir ? '' : ` --data-dir ${shellWord(dir)}`;
}

/** How to create the missing data dir `dir`: `estate init` when commands look there without --data-dir (or name another), else `estate init DIR`. */
export function initHint(dir: string, env: NodeJS.ProcessEnv = process.env): string {
  return resolveDataDir(undefined, env) === dir ? 'create it with: estate init, or name another with --data-dir DIR' : `create it with: estate init ${shellWord(dir)}`;
}

/** Fails with a usage error (exit 2) unless `dir` is an existing, readable directory; `env` says how to create it (initHint). */
export function assertDataDir(dir: string, env: NodeJS.ProcessEnv = process.env): void {
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (err) {
    if (isNotFound(err)) throw new EstateError('usage', `data directory ${dir} does not exist (${initHint(dir, env)})`);
    throw new EstateError('usage', `data directory ${dir} is not readable: ${(err as Error).message}`);
  }
  if (!isDir) throw new EstateError('usage', `data directory ${dir} is not a directory`);
}

/** This node's name: `node_name` in the config, else the host name (DESIGN.md 7a; `--node` overrides it where a command takes one). */
/** What /events watches besides the state files (EventWatch): the schedules, the alerts' hold, this node's name, the providers' names. */
export function eventWatch(config: Pick<EstateConfig, 'node_name' | 'schedules' | 'alerts' | 'providers'>): {
  schedules: EstateConfig['schedules'];
  holdMs: number;
  thisNode: string;
  providers: string[];
} {
  return {
    schedules: config.schedules,
    holdMs: config.alerts.hold === '0s' ? 0 : parseDuration(config.alerts.hold, 'alerts.hold'),
    thisNode: nodeName(config),
    providers: config.providers.map((p) => p.name),
  };
}

export function nodeName(config: Pick<EstateConfig, 'node_name'>): string {
  return config.node_name ?? os.hostname();
}

/**
 * Reads and validates the config: `--config FILE` if given (it must exist),
 * else `estate.config.json` in the data dir (optional), which is never read
 * through a link (`readDataFileSync`). Every problem is reported with its
 * path in the file.
 */
export function loadConfig(dataDir: string, configFlag?: string, env: NodeJS.ProcessEnv = process.env): EstateConfig {
  const file = configFlag ? path.resolve(configFlag) : path.join(dataDir, CONFIG_FILE);
  let text: string | undefined;
  try {
    text = configFlag ? readFileSync(file, 'utf8') : readDataFileSync(file);
  } catch (err) {
    if (err instanceof EstateError) throw err;
    if (!isNotFound(err) || configFlag) throw new EstateError('usage', `cannot read config ${file}: ${(err as Error).message}`);
  }
  if (text === undefined) return defaultConfig();
  const cache = bundleConfigCache(env);
  const cached = cache?.get(text);
  if (cached) return cached as EstateConfig;
  const config = parseConfig(text, file);
  cache?.put(text, config);
  return config;
}

/** A random id each build puts in the bundle (scripts/build.mjs); absent when run from source. */
declare const __ESTATE_BUILD_ID__: string | undefined;

/** The cache of checked configs (checked-config-cache.ts), in the built CLI only: keyed to the build that checked them. */
function bundleConfigCache(env: NodeJS.ProcessEnv): CheckedConfigCache | undefined {
  if (typeof __ESTATE_BUILD_ID__ !== 'string') return undefined;
  const file = checkedConfigCacheFile(env);
  return file === undefined ? undefined : checkedConfigCache(file, __ESTATE_BUILD_ID__);
}

/** The defaults as JSON, put in the bundle by scripts/build.mjs (computed from the schemas); absent when run from source. */
declare const __ESTATE_CONFIG_DEFAULTS__: string | undefined;

/** The config of an estate without a config file: every default. From the bundle's copy when there is one, so no schema is built. */
export function defaultConfig(): EstateConfig {
  if (typeof __ESTATE_CONFIG_DEFAULTS__ === 'string') return JSON.parse(__ESTATE_CONFIG_DEFAULTS__) as EstateConfig;
  return configSchema().parse({});
}

export function parseConfig(text: string, file: string): EstateConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new EstateError('usage', `config ${file} is not valid JSON: ${(err as Error).message}`);
  }
  const checked = checkSections(raw);
  if (checked) return checked;
  // Something is wrong: the whole schema names every problem at once.
  const parsed = configSchema().safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.flatMap((i) => {
    const where = (extra: PropertyKey[] = []) => [...i.path, ...extra].map(String).join('.') || '(top level)';
    if (i.code === 'unrecognized_keys') return i.keys.map((k) => `${where([k])}: unknown key`);
    return [`${where()}: ${i.message}`];
  });
  throw new EstateError('usage', `config ${file} is invalid: ${problems.join('; ')}`);
}

/**
 * `raw` checked a section at a time, the defaults standing in for the
 * sections it lacks: what configSchema makes of it, building only the
 * schemas of the sections it has. Undefined when anything in it is wrong.
 */
function checkSections(raw: unknown): EstateConfig | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  if (Object.keys(raw).some((name) => !Object.hasOwn(SECTIONS, name))) return undefined;
  const defaults = defaultConfig() as Record<string, unknown>;
  const config: Record<string, unknown> = {};
  for (const name of Object.keys(SECTIONS) as SectionName[]) {
    let value = defaults[name];
    if (Object.hasOwn(raw, name)) {
      const parsed = SECTIONS[name]().safeParse((raw as Record<string, unknown>)[name]);
      if (!parsed.success) return undefined;
      value = parsed.data;
    }
    if (value !== undefined) config[name] = value;
  }
  return config as EstateConfig;
}

/** Secrets named by the config, read from the environment (never from the config file). */
export interface Secrets {
  /** The forge token, from the variable named by `forge.token_env`; undefined when unset or empty. */
  forgeToken: string | undefined;
  /** Each notify target's secret (by target name), from the variable its `secret_env` names; undefined when unset or empty. */
  notify: Readonly<Record<string, string | undefined>>;
}

export function resolveSecrets(config: EstateConfig, env: NodeJS.ProcessEnv = process.env): Secrets {
  const name = config.forge?.token_env;
  const notify = Object.fromEntries((config.notify ?? []).map((target) => [target.name, env[target.secret_env] || undefined]));
  return { forgeToken: (name && env[name]) || undefined, notify };
}

/**
 * The store to open: `--store`, else `ESTATE_STORE`, else the config's
 * `store`; undefined for the data dir (the default).
 */
export function resolveStoreSpec(flag: string | undefined, config: EstateConfig, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return flag || env.ESTATE_STORE || config.store || undefined;
}

/** `env`, or the process environment when it is not given (this module is its only reader). */
export function environment(env?: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return env ?? process.env;
}

/** The credential and address settings that come from the environment. */
export interface EnvSettings {
  apiKey: string | undefined;
  url: string | undefined;
  /** `ESTATE_CONTEXT`: a context of the user's contexts file (src/cli/contexts-file.ts). */
  context: string | undefined;
  dataDir: string | undefined;
  noColor: boolean;
}

/** Largest answer the CLI reads from a remote server (`--url`) by default; `ESTATE_MAX_ANSWER_BYTES` overrides it. */
export const DEFAULT_MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/**
 * How many bytes of a remote server's answer (or of one event of its
 * stream) the CLI reads before giving up: `ESTATE_MAX_ANSWER_BYTES`, a whole
 * number from 1024 to 2^40, else DEFAULT_MAX_ANSWER_BYTES. Anything else is a usage error.
 */
export function maxAnswerBytes(env: NodeJS.ProcessEnv = process.env): number {
  const text = env.ESTATE_MAX_ANSWER_BYTES;
  if (text === undefined || text === '') return DEFAULT_MAX_ANSWER_BYTES;
  const n = /^\d{1,13}$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= 1024 && n <= 2 ** 40)) throw new EstateError('usage', `ESTATE_MAX_ANSWER_BYTES must be a whole number of bytes from 1024 to ${2 ** 40}, not "${text}"`);
  return n;
}

export function envSettings(env: NodeJS.ProcessEnv = process.env): EnvSettings {
  return {
    apiKey: env.ESTATE_API_KEY || undefined,
    url: env.ESTATE_URL || undefined,
    context: env.ESTATE_CONTEXT || undefined,
    dataDir: env.ESTATE_DATA_DIR || undefined,
    noColor: env.NO_COLOR !== undefined && env.NO_COLOR !== '',
  };
}
