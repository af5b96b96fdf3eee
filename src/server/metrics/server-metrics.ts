import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type RegistryContentType } from './prom.ts';
import type { EstateReadings } from '../../core/metrics/estate-readings.ts';
import { observeCore } from '../../core/observe.ts';
import { wasOverloadRefusal } from '../overload-refusals.ts';

// The server's metrics (GET /metrics) with prom-client: the Prometheus
// text format, or OpenMetrics when the scraper asks for it (Accept). The
// requests are counted by their route's template, never the path sent, so
// a label's values are bounded by the routes; estate's own state is read
// at each scrape (estate-readings.ts: the newest end of each node's
// records, never a scan).

/** Seconds: from a cached read (under a millisecond) to a slow external source. */
/** How long a scrape waits for the estate's readings. */
const READINGS_MS = 5000;
/** Scrapes that wait for one reading before it is let go. */
const MAX_WAITS = 3;
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds a lock is waited for: an uncontended one takes tens of microseconds, a busy one up to its 10 s patience. */
const WAIT_BUCKETS = [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10];
/** Records in one write: a completion is 1, a hub's ingest batch or a log's batched append up to thousands. */
const BATCH_BUCKETS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000];
const PULSE_STATES = ['healthy', 'degraded', 'unhealthy', 'unknown'] as const;
const SCHEDULE_STATES = ['new', 'up', 'late', 'down'] as const;
const OPENMETRICS = 'application/openmetrics-text';

export interface ServerMetricsOptions {
  /** What estate knows of the estate now, read at each scrape. */
  readings: () => Promise<EstateReadings>;
  /** The server-sent event streams open now. */
  streams?: () => number;
  version: string;
  /** The config's notify targets' names: their attempt counters start at 0. */
  notifyTargets?: readonly string[];
  /** How long a scrape waits for `readings` (default READINGS_MS). */
  readingsMs?: number;
}

export interface ServerMetrics {
  /** Follows one request from its routing to its end (HandlerOptions.observe). */
  observe(req: IncomingMessage, res: ServerResponse, route: string): void;
  /** The exposition for a scraper sending `accept`: its content type and text. */
  render(accept: string | undefined): Promise<{ contentType: string; text: string }>;
  /** Stops observing core (the store's writes, lock waits, external sources). */
  close(): void;
}

export function createServerMetrics(options: ServerMetricsOptions): ServerMetrics {
  const registry = new Registry<RegistryContentType>();
  collectDefaultMetrics({ register: registry });
  // Gauges named as counters (promtool refuses them); the same counts by type stay (nodejs_active_handles, ...).
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) registry.removeSingleMetric(name);
  const registers = [registry];
  const requests = new Counter({
    name: 'estate_http_requests_total',
    help: 'HTTP requests answered, by route template, method and status class (2xx, 4xx, 5xx; "aborted" when the connection closed first).',
    labelNames: ['route', 'method', 'status_class'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'estate_http_request_duration_seconds',
    help: 'Time from a request routed to its answer sent, by route template and method.',
    labelNames: ['route', 'method'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const inFlight = new Gauge({ name: 'estate_http_requests_in_flight', help: 'Requests being answered now.', registers });
  const refused = new Counter({
    name: 'estate_http_requests_refused_total',
    help: 'Requests refused to protect the server: "rate_limited" (429, a client past its rate or its share) and "overloaded" (503, a bound of the server reached).',
    labelNames: ['reason'] as const,
    registers,
  });
  for (const reason of ['rate_limited', 'overloaded']) refused.inc({ reason }, 0);
  new Gauge({
    name: 'estate_sse_clients',
    help: 'Server-sent event streams open now (GET /work/stream).',
    registers,
    collect() {
      this.set(options.streams?.() ?? 0);
    },
  });
  new Gauge({ name: 'estate_build_info', help: 'Always 1; the version of estate serving.', labelNames: ['version'] as const, registers }).set({ version: options.version }, 1);

  const nodes = new Gauge({ name: 'estate_nodes', help: 'Nodes the estate knows (GET /nodes).', registers });
  const lastSeen = new Gauge({
    name: 'estate_node_last_seen_seconds',
    help: "Seconds since a node's last heartbeat or trend point (a node that never sent one has none).",
    labelNames: ['node'] as const,
    registers,
  });
  const stale = new Gauge({ name: 'estate_node_stale', help: '1 when nothing was heard of a node for events.stale_after_s, else 0.', labelNames: ['node'] as const, registers });
  const pulse = new Gauge({
    name: 'estate_node_pulse_status',
    help: "1 for the status of a node's newest pulse (healthy, degraded, unhealthy; unknown when it has none or another), 0 for the others.",
    labelNames: ['node', 'status'] as const,
    registers,
  });
  const estatePulse = new Gauge({
    name: 'estate_pulse_status',
    help: "1 for the status of the estate's newest pulse entry, whichever node's (GET /health/pulse/latest; unknown when there is none or another status), 0 for the others.",
    labelNames: ['status'] as const,
    registers,
  });
  const diskUsed = new Gauge({
    name: 'estate_disk_used_ratio',
    help: "Used share of each file system of a node's newest disk sample: used / (used + free), as df shows it.",
    labelNames: ['node', 'mount'] as const,
    registers,
  });
  const scheduleState = new Gauge({
    name: 'estate_schedule_state',
    help: "1 for a schedule's state (new, up, late, down: GET /schedules), 0 for the others.",
    labelNames: ['schedule', 'state'] as const,
    registers,
  });
  const lastCheckIn = new Gauge({
    name: 'estate_schedule_last_checkin_seconds',
    help: "Seconds since a schedule's newest check-in (a schedule with none has none).",
    labelNames: ['schedule'] as const,
    registers,
  });
  const lastDuration = new Gauge({
    name: 'estate_schedule_last_run_duration_seconds',
    help: "How long a schedule's newest check-in's run took, from its start (POST /work/start) to its completion; none for a run without a start.",
    labelNames: ['schedule'] as const,
    registers,
  });
  const running = new Gauge({
    name: 'estate_schedule_runs_open',
    help: 'Runs of a schedule with max_runtime started and not completed.',
    labelNames: ['schedule'] as const,
    registers,
  });
  const boardLast = new Gauge({
    name: 'estate_board_last_completion_seconds',
    help: "Seconds since a board's newest work completion.",
    labelNames: ['board'] as const,
    registers,
  });
  const builds = new Gauge({
    name: 'estate_builds_last_7d',
    help: 'Builds of the last 7 days by status (builds.jsonl, as GET /builds counts them).',
    labelNames: ['status'] as const,
    registers,
  });
  // What core observes (src/core/observe.ts): the store's writes, the data dir's appends and lock waits, the external sources.
  const writeSeconds = new Histogram({
    name: 'estate_store_write_duration_seconds',
    help: 'Time of a write through the store, by kind: completions, starts, entries (one record each), ingest (a hub batch), sample (this node\'s collector), probes (a round of provider probes).',
    labelNames: ['kind'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const writeRecords = new Histogram({
    name: 'estate_store_write_records',
    help: 'Records a write through the store carried, by kind: samples of an ingest batch, records of a sample, probes of a round, 1 for a completion or an entry.',
    labelNames: ['kind'] as const,
    buckets: BATCH_BUCKETS,
    registers,
  });
  const writeFailures = new Counter({ name: 'estate_store_write_failures_total', help: 'Writes through the store that failed (an error answer), by kind.', labelNames: ['kind'] as const, registers });
  const appendRecords = new Histogram({
    name: 'estate_log_append_records',
    help: 'Records of one durable append (one write and one fsync) to a data dir log, by its file name: concurrent writes are batched into one.',
    labelNames: ['log'] as const,
    buckets: BATCH_BUCKETS,
    registers,
  });
  const appendSeconds = new Histogram({
    name: 'estate_log_append_duration_seconds',
    help: 'Time of one durable append (write and fsync) to a data dir log, by its file name.',
    labelNames: ['log'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const lockWait = new Histogram({
    name: 'estate_lock_wait_seconds',
    help: 'Time spent waiting to take a data dir file lock, by the file it guards (other: a lock outside the layout\'s names).',
    labelNames: ['lock'] as const,
    buckets: WAIT_BUCKETS,
    registers,
  });
  const externalSeconds = new Histogram({
    name: 'estate_external_request_duration_seconds',
    help: 'Time of a request to an external source (forge, providers: one provider checked, stats: one run of the statistics command), to its answer or failure.',
    labelNames: ['source'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const externalRequests = new Counter({
    name: 'estate_external_requests_total',
    help: 'Requests to external sources by source and outcome: ok, error (refused, unreachable, an error status), timeout.',
    labelNames: ['source', 'outcome'] as const,
    registers,
  });
  for (const source of ['forge', 'providers', 'stats']) for (const outcome of ['ok', 'error', 'timeout']) externalRequests.inc({ source, outcome }, 0);
  const notifyAttempts = new Counter({
    name: 'estate_notify_attempts_total',
    help: 'Recorded attempts of webhook deliveries by target and outcome: delivered, retry (failed, tried again later), failed (failed, its retry_for ran out). Each server counts its own.',
    labelNames: ['target', 'outcome'] as const,
    registers,
  });
  const notifySeconds = new Histogram({
    name: 'estate_notify_attempt_duration_seconds',
    help: 'Time of a recorded webhook attempt, to the receiver\'s answer or failure, by target.',
    labelNames: ['target'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  for (const target of options.notifyTargets ?? []) for (const outcome of ['delivered', 'retry', 'failed']) notifyAttempts.inc({ target, outcome }, 0);
  const eventsRecorded = new Counter({
    name: 'estate_events_recorded_total',
    help: 'Watched events this server stored first (DESIGN.md 3), by kind; a replica counts those it noticed before the others.',
    labelNames: ['kind'] as const,
    registers,
  });
  const stopObserving = observeCore({
    storeWrite: (w) => {
      writeSeconds.observe({ kind: w.kind }, w.seconds);
      writeRecords.observe({ kind: w.kind }, w.records);
      if (!w.ok) writeFailures.inc({ kind: w.kind });
    },
    logAppend: (a) => {
      appendRecords.observe({ log: a.log }, a.records);
      appendSeconds.observe({ log: a.log }, a.seconds);
    },
    lockWait: (w) => lockWait.observe({ lock: w.lock }, w.seconds),
    external: (e) => {
      externalSeconds.observe({ source: e.source }, e.seconds);
      externalRequests.inc({ source: e.source, outcome: e.outcome });
    },
    notifyAttempt: (a) => {
      notifyAttempts.inc({ target: a.target, outcome: a.outcome });
      notifySeconds.observe({ target: a.target }, a.seconds);
    },
    eventRecorded: (e) => eventsRecorded.inc({ kind: e.kind }),
  });

  const staleAfter = new Gauge({ name: 'estate_node_stale_after_seconds', help: 'events.stale_after_s: silence after which a node is stale.', registers });

  const readingsOk = new Gauge({
    name: 'estate_readings_ok',
    help: "1 when this scrape's estate gauges were read afresh; 0 when the reading failed or took longer than 5 s (the estate gauges then hold the last good reading; the request and process metrics answer as ever).",
    registers,
  });
  /** The reading under way, if one is: a scrape that finds one waits for it rather than starting another beside a hung one. */
  let reading: Promise<EstateReadings> | undefined;
  /** Scrapes that waited in vain for `reading`. */
  let waited = 0;

  /** Sets the estate's gauges from a fresh reading; nodes gone since the last scrape go with the reset. A reading that fails or hangs leaves them as they were. */
  const readEstate = async () => {
    if (!reading) {
      const started: Promise<EstateReadings> = options.readings().finally(() => {
        if (reading === started) reading = undefined;
      });
      reading = started;
      waited = 0;
    }
    const current = reading;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), options.readingsMs ?? READINGS_MS)));
    const estate = await Promise.race([current, late]).catch(() => undefined).finally(() => clearTimeout(timer));
    // A reading that outlasted MAX_WAITS scrapes is let go (a read that never settles): the next scrape starts another.
    if (!estate && reading === current && ++waited >= MAX_WAITS) reading = undefined;
    readingsOk.set(estate ? 1 : 0);
    if (!estate) return;
    for (const gauge of [lastSeen, stale, pulse, diskUsed, scheduleState, lastCheckIn, lastDuration, running, boardLast]) gauge.reset();
    for (const b of estate.boards) boardLast.set({ board: b.board }, b.lastCompletionAgoS);
    for (const b of estate.builds) builds.set({ status: b.status }, b.count);
    for (const s of estate.schedules) {
      for (const state of SCHEDULE_STATES) scheduleState.set({ schedule: s.name, state }, state === s.state ? 1 : 0);
      if (s.lastCheckInAgoS !== null) lastCheckIn.set({ schedule: s.name }, s.lastCheckInAgoS);
      if (s.last_duration_s !== null) lastDuration.set({ schedule: s.name }, s.last_duration_s);
      if (s.max_runtime !== null) running.set({ schedule: s.name }, s.running.length);
    }
    nodes.set(estate.nodes.length);
    const newest = pulseState(estate.pulseStatus);
    for (const s of PULSE_STATES) estatePulse.set({ status: s }, s === newest ? 1 : 0);
    staleAfter.set(estate.staleAfterS);
    for (const n of estate.nodes) {
      if (n.lastSeenAgoS !== null) lastSeen.set({ node: n.node }, n.lastSeenAgoS);
      stale.set({ node: n.node }, n.stale ? 1 : 0);
      const status = pulseState(n.pulseStatus);
      for (const s of PULSE_STATES) pulse.set({ node: n.node, status: s }, s === status ? 1 : 0);
      for (const d of n.disks) diskUsed.set({ node: n.node, mount: d.mount }, d.usedRatio);
    }
  };

  // One scrape at a time: the registry's content type is switched for an OpenMetrics one.
  let queue: Promise<unknown> = Promise.resolve();
  return {
    observe(req, res, route) {
      const method = req.method ?? 'GET';
      const started = performance.now();
      inFlight.inc();
      res.once('close', () => {
        inFlight.dec();
        const status = res.headersSent ? res.statusCode : 0;
        const statusClass = status === 0 || !res.writableFinished ? 'aborted' : `${Math.floor(status / 100)}xx`;
        requests.inc({ route, method, status_class: statusClass });
        // A stream of server-sent events lasts as long as its client stays: its time is no request latency.
        if (!String(res.getHeader('content-type') ?? '').startsWith('text/event-stream')) duration.observe({ route, method }, (performance.now() - started) / 1000);
        if (status === 429) refused.inc({ reason: 'rate_limited' });
        else if (status === 503 && wasOverloadRefusal(res)) refused.inc({ reason: 'overloaded' });
      });
    },
    close: stopObserving,
    render(accept) {
      const openMetrics = wantsOpenMetrics(accept);
      const next = queue.then(async () => {
        await readEstate();
        registry.setContentType(openMetrics ? Registry.OPENMETRICS_CONTENT_TYPE : Registry.PROMETHEUS_CONTENT_TYPE);
        try {
          return { contentType: registry.contentType, text: await registry.metrics() };
        } finally {
          registry.setContentType(Registry.PROMETHEUS_CONTENT_TYPE);
        }
      });
      queue = next.catch(() => {});
      return next;
    },
  };
}

/** A pulse status as a label value: one of PULSE_STATES. */
function pulseState(status: string | null): (typeof PULSE_STATES)[number] {
  return (PULSE_STATES as readonly (string | null)[]).includes(status) ? (status as (typeof PULSE_STATES)[number]) : 'unknown';
}

/** Whether `accept` ranks OpenMetrics above the text format (as Prometheus asks when it may negotiate it). */
export function wantsOpenMetrics(accept: string | undefined): boolean {
  if (!accept) return false;
  let om = -1;
  let text = -1;
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!Number.isFinite(q)) continue;
    if (type === OPENMETRICS) om = Math.max(om, q);
    else if (type === 'text/plain' || type === '*/*' || type === 'text/*') text = Math.max(text, q);
  }
  return om > 0 && om >= text;
}
