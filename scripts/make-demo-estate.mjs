#!/usr/bin/env node
// Generates fixtures/demo-estate/: a deterministic demo data directory
// (DESIGN.md section 3) for `estate serve --demo` and for tests.
//
// Deterministic: every random choice comes from a seeded PRNG (mulberry32),
// one independent stream per file, and "now" is a fixed anchor time. Running
// this script twice yields byte-identical output.
//
// Usage: node scripts/make-demo-estate.mjs [OUT_DIR]

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = resolve(process.argv[2] ?? join(ROOT, 'fixtures', 'demo-estate'));

const ANCHOR = Date.parse('2026-11-22T00:00:00.000Z');
const SEED = 0x5eed2026;
const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

// ---------------------------------------------------------------- helpers

function mulberry32(a) {
  return function next() {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Independent stream per name, so editing one generator never shifts another. */
function rngFor(name) {
  let h = SEED >>> 0;
  for (const ch of name) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  const r = mulberry32(h);
  const api = {
    next: r,
    float: (lo, hi) => lo + (hi - lo) * r(),
    int: (lo, hi) => lo + Math.floor(r() * (hi - lo + 1)), // inclusive
    chance: (p) => r() < p,
    pick: (arr) => arr[Math.floor(r() * arr.length)],
    weighted: (pairs) => {
      const total = pairs.reduce((s, [, w]) => s + w, 0);
      let x = r() * total;
      for (const [v, w] of pairs) {
        x -= w;
        if (x < 0) return v;
      }
      return pairs[pairs.length - 1][0];
    },
    gauss: () => {
      // Box-Muller, standard normal
      const u = 1 - r();
      const v = r();
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    },
    hex: (n) => {
      let s = '';
      for (let i = 0; i < n; i++) s += Math.floor(r() * 16).toString(16);
      return s;
    },
    shuffle: (arr) => {
      const a = arr.slice();
      for (let i = a.length - 1; i > 0; i--) {
        const j = Math.floor(r() * (i + 1));
        [a[i], a[j]] = [a[j], a[i]];
      }
      return a;
    },
  };
  return api;
}

const iso = (ms) => new Date(ms).toISOString();
const clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x));
const round = (x, d) => Math.round(x * 10 ** d) / 10 ** d;
const slugify = (s) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');

/** Fraction of the day in UTC, 0..1. */
const dayFrac = (ms) => (((ms % DAY) + DAY) % DAY) / DAY;
/** Diurnal activity 0..1, trough ~03:00 UTC, peak ~15:00 UTC. */
const diurnal = (ms) => 0.5 - 0.5 * Math.cos(2 * Math.PI * (dayFrac(ms) - 0.125));
const isWeekend = (ms) => {
  const d = new Date(ms).getUTCDay();
  return d === 0 || d === 6;
};

function writeJsonl(rel, records, timeField) {
  const sorted = records
    .map((r, i) => [r, i])
    .sort((a, b) => Date.parse(a[0][timeField]) - Date.parse(b[0][timeField]) || a[1] - b[1])
    .map(([r]) => r);
  write(rel, sorted.map((r) => JSON.stringify(r) + '\n').join(''));
}
function writeJson(rel, value) {
  write(rel, JSON.stringify(value, null, 2) + '\n');
}
function write(rel, text) {
  const p = join(OUT, rel);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, text);
}

// ---------------------------------------------------------------- shared facts

const NODES = ['hub', 'forge', 'gpu-1', 'edge-2', 'rotating'];
const AGENTS = ['scribe', 'gardener', 'sentinel', 'builder', 'curator', 'ferry', 'lamplighter', 'tinker'];
const EDGE2_LAST_SEEN = ANCHOR - 3 * HOUR;

// Incidents shared across files so the demo tells one consistent story.
// (offsets are from the anchor, in ms; windows are [start, end))
const INCIDENTS = {
  // Forge build storm: CI fan-out after a dependency bump, CPU and queue spike.
  buildStorm: { start: ANCHOR - 9 * DAY + 14 * HOUR + 20 * MIN, end: ANCHOR - 9 * DAY + 15 * HOUR + 35 * MIN, node: 'forge' },
  // GPU saturation during a fine-tune, requests back up, p95 climbs.
  gpuSaturation: { start: ANCHOR - 4 * DAY + 10 * HOUR + 5 * MIN, end: ANCHOR - 4 * DAY + 11 * HOUR + 10 * MIN, node: 'gpu-1' },
  // Forge unreachable (health pulse goes unhealthy).
  forgeOutage: { start: ANCHOR - 2 * DAY - 7 * HOUR - 30 * MIN, end: ANCHOR - 2 * DAY - 6 * HOUR - 45 * MIN, node: 'forge' },
};
const inWindow = (ms, w) => ms >= w.start && ms < w.end;

// ---------------------------------------------------------------- 1. trends

function genTrends() {
  const rnd = rngFor('trends');
  const profile = {
    hub: { cpu: 18, cpuAmp: 22, mem: 46, cores: 4, rpm: 260, rpmAmp: 340, p95: 95 },
    forge: { cpu: 22, cpuAmp: 30, mem: 58, cores: 8, rpm: 90, rpmAmp: 160, p95: 140 },
    'gpu-1': { cpu: 35, cpuAmp: 28, mem: 71, cores: 16, rpm: 40, rpmAmp: 70, p95: 420 },
    'edge-2': { cpu: 8, cpuAmp: 12, mem: 33, cores: 2, rpm: 150, rpmAmp: 220, p95: 60 },
    rotating: { cpu: 12, cpuAmp: 18, mem: 40, cores: 4, rpm: 30, rpmAmp: 55, p95: 110 },
  };
  // slow per-node random walk for memory, so it drifts rather than jitters
  const memDrift = Object.fromEntries(NODES.map((n) => [n, 0]));
  const points = [];
  const N = 14 * 288; // 14 days, every 5 minutes
  for (let i = 0; i < N; i++) {
    const ts = ANCHOR - (N - 1 - i) * 5 * MIN;
    let node = NODES[i % NODES.length];
    if (node === 'edge-2' && ts > EDGE2_LAST_SEEN) node = 'hub'; // edge-2 went dark
    const p = profile[node];
    const d = diurnal(ts) * (isWeekend(ts) ? 0.6 : 1);

    let cpu = p.cpu + p.cpuAmp * d + rnd.gauss() * 3.5;
    let rpm = p.rpm + p.rpmAmp * d + rnd.gauss() * p.rpm * 0.12;
    let p95 = p.p95 * (1 + 0.35 * d) + rnd.gauss() * p.p95 * 0.08;
    let queue = Math.max(0, Math.round(rnd.gauss() * 1.5 + 2 * d));

    // occasional small blips
    if (rnd.chance(0.01)) {
      cpu += rnd.float(15, 30);
      p95 *= rnd.float(1.3, 1.8);
    }

    for (const [name, w] of Object.entries(INCIDENTS)) {
      if (!inWindow(ts, w)) continue;
      const t = (ts - w.start) / (w.end - w.start); // 0..1 through the window
      const shape = Math.sin(Math.PI * t); // rise and fall
      if (name === 'buildStorm' && node === 'forge') {
        cpu = 88 + 10 * shape + rnd.gauss() * 2;
        queue += Math.round(30 + 60 * shape);
        p95 *= 2.5 + 2 * shape;
      } else if (name === 'gpuSaturation' && node === 'gpu-1') {
        cpu = 93 + 6 * shape + rnd.gauss();
        queue += Math.round(12 + 40 * shape);
        p95 *= 3 + 3 * shape;
        rpm *= 0.6;
      } else if (name === 'gpuSaturation' && node === 'hub') {
        p95 *= 1.6; // upstream latency leaks into the hub's p95
        queue += Math.round(6 * shape);
      } else if (name === 'forgeOutage' && node === 'forge') {
        cpu = 2 + rnd.float(0, 2);
        rpm = 0;
        p95 = 5000 + rnd.float(0, 800); // timeouts
        queue += Math.round(20 + 25 * t);
      }
    }

    memDrift[node] = clamp(memDrift[node] + rnd.gauss() * 0.4, -8, 8);
    const mem = p.mem + memDrift[node] + 6 * d + rnd.gauss() * 0.8;
    cpu = clamp(cpu, 0.3, 100);
    const load1 = Math.max(0.01, (cpu / 100) * p.cores * rnd.float(0.85, 1.15));

    points.push({
      ts: iso(ts),
      node,
      cpu_pct: round(cpu, 1),
      mem_pct: round(clamp(mem, 1, 99), 1),
      load1: round(load1, 2),
      requests_per_min: Math.max(0, Math.round(rpm)),
      p95_ms: Math.max(1, Math.round(p95)),
      queue_depth: Math.max(0, queue),
    });
  }
  writeJsonl('trends.jsonl', points, 'ts');
  return points.length;
}

// ---------------------------------------------------------------- 2. disk

function genDisk() {
  const rnd = rngFor('disk');
  const GiB = 1024 ** 3;
  const mounts = [
    // total, starting used, growth per hour (bytes), hourly jitter
    { mount: '/', total: 476 * GiB, used: 212 * GiB, grow: 0.045 * GiB, jitter: 0.05 * GiB },
    { mount: '/var/lib/estate', total: 196 * GiB, used: 121 * GiB, grow: 0.11 * GiB, jitter: 0.08 * GiB },
    { mount: '/srv/models', total: 1832 * GiB, used: 1390 * GiB, grow: 0.9 * GiB, jitter: 0.4 * GiB },
  ];
  // One cleanup: old checkpoints pruned from /srv/models, and log rotation on
  // /var/lib/estate shortly after, 6 days before the anchor.
  const cleanups = [
    { mount: '/srv/models', at: ANCHOR - 6 * DAY + 11 * HOUR, free: 310 * GiB },
    { mount: '/var/lib/estate', at: ANCHOR - 6 * DAY + 12 * HOUR, free: 18 * GiB },
  ];
  const H = 14 * 24;
  const rows = [];
  for (let h = 0; h < H; h++) {
    const ts = ANCHOR - (H - 1 - h) * HOUR;
    for (const m of mounts) {
      const busy = 0.4 + 1.2 * diurnal(ts); // more writes during the day
      m.used += m.grow * busy + rnd.gauss() * m.jitter;
      // model downloads arrive in lumps
      if (m.mount === '/srv/models' && rnd.chance(0.02)) m.used += rnd.float(4, 28) * GiB;
      for (const c of cleanups) if (c.mount === m.mount && ts >= c.at && ts < c.at + HOUR) m.used -= c.free;
      m.used = clamp(m.used, 0.05 * m.total, 0.97 * m.total);
      const used = Math.round(m.used);
      rows.push({
        ts: iso(ts),
        mount: m.mount,
        total_bytes: m.total,
        used_bytes: used,
        free_bytes: m.total - used,
        node: 'hub',
      });
    }
  }
  writeJsonl('disk.jsonl', rows, 'ts');
  return rows.length;
}

// ---------------------------------------------------------------- 3. health pulse

function genHealthPulse() {
  const rnd = rngFor('health-pulse');
  const N = 7 * 96; // 7 days every 15 minutes
  const STEP = 15 * MIN;
  const first = ANCHOR - (N - 1) * STEP;
  // Non-healthy runs: [startIndex, length, status, check, value]
  const runs = [
    { at: ANCHOR - 6 * DAY + 11 * HOUR - 30 * MIN, len: 4, status: 'degraded', check: 'disk', value: 'warn' },
    { at: ANCHOR - 5 * DAY + 2 * HOUR + 15 * MIN, len: 3, status: 'degraded', check: 'providers', value: 'slow' },
    { at: ANCHOR - 4 * DAY + 10 * HOUR, len: 5, status: 'degraded', check: 'queue', value: 'backlog' },
    { at: INCIDENTS.forgeOutage.start - 30 * MIN, len: 2, status: 'degraded', check: 'forge', value: 'slow' },
    { at: INCIDENTS.forgeOutage.start, len: 3, status: 'unhealthy', check: 'forge', value: 'unreachable' },
    { at: INCIDENTS.forgeOutage.end, len: 2, status: 'degraded', check: 'queue', value: 'backlog' },
    { at: ANCHOR - 1 * DAY + 19 * HOUR + 45 * MIN, len: 2, status: 'degraded', check: 'providers', value: 'slow' },
  ];
  const rows = [];
  for (let i = 0; i < N; i++) {
    const ts = first + i * STEP;
    const checks = { disk: 'ok', forge: 'ok', providers: 'ok', queue: 'ok' };
    let status = 'healthy';
    for (const r of runs) {
      const k = Math.floor((ts - r.at) / STEP);
      if (k >= 0 && k < r.len) {
        status = r.status;
        checks[r.check] = r.value;
      }
    }
    // rare single-sample provider hiccup
    if (status === 'healthy' && i < N - 1 && rnd.chance(0.012)) {
      status = 'degraded';
      checks.providers = 'slow';
    }
    if (i === N - 1) {
      status = 'healthy';
      for (const k of Object.keys(checks)) checks[k] = 'ok';
    }
    rows.push({ ts: iso(ts), status, checks });
  }
  writeJsonl('health-pulse.jsonl', rows, 'ts');
  return rows.length;
}

// ---------------------------------------------------------------- 4. builds

function genBuilds() {
  const rnd = rngFor('builds');
  const projects = [
    ['estate', 30],
    ['garden-site', 20],
    ['agent-runner', 22],
    ['model-gateway', 16],
    ['infra', 12],
  ];
  const duration = {
    estate: [90, 260],
    'garden-site': [35, 120],
    'agent-runner': [150, 420],
    'model-gateway': [200, 640],
    infra: [60, 900],
  };
  const branches = {
    estate: ['feat/events-feed', 'fix/torn-lines', 'feat/openapi', 'chore/deps', 'feat/demo-mode'],
    'garden-site': ['feat/rss', 'fix/dark-mode', 'content/november', 'feat/search'],
    'agent-runner': ['feat/retry-backoff', 'fix/lock-timeout', 'feat/sandbox', 'refactor/scheduler'],
    'model-gateway': ['feat/streaming', 'fix/token-count', 'feat/fallback-provider', 'perf/batching'],
    infra: ['feat/edge-2-ansible', 'fix/backup-cron', 'chore/rotate-certs', 'feat/wireguard'],
  };
  const rows = [];
  for (let d = 30; d >= 1; d--) {
    const dayStart = ANCHOR - d * DAY;
    const stormDay = INCIDENTS.buildStorm.start >= dayStart && INCIDENTS.buildStorm.start < dayStart + DAY;
    const n = isWeekend(dayStart) || stormDay ? rnd.int(3, 6) : rnd.int(5, 12);
    for (let k = 0; k < n; k++) {
      const project = rnd.weighted(projects);
      // mostly working hours (07:00-21:00 UTC), some nightly
      const hour = rnd.chance(0.85) ? rnd.float(7, 21) : rnd.float(0, 24);
      const ts = dayStart + Math.floor(hour * HOUR + rnd.int(0, 59) * 1000) ;
      const status = rnd.weighted([
        ['success', 85],
        ['failure', 11],
        ['cancelled', 4],
      ]);
      const [lo, hi] = duration[project];
      let dur = rnd.int(lo, hi);
      if (status === 'failure') dur = Math.round(dur * rnd.float(0.3, 1));
      if (status === 'cancelled') dur = Math.round(dur * rnd.float(0.05, 0.5));
      const ref = rnd.chance(0.6) ? 'main' : rnd.pick(branches[project]);
      rows.push({
        ts: iso(Math.floor(ts / 1000) * 1000),
        project,
        status,
        duration_s: Math.max(4, dur),
        ref,
        commit: rnd.hex(7),
      });
    }
  }
  // the build storm: a burst of estate/agent-runner builds on forge
  for (let k = 0; k < 6; k++) {
    const ts = INCIDENTS.buildStorm.start + k * 11 * MIN + rnd.int(0, 300) * 1000;
    rows.push({
      ts: iso(Math.floor(ts / 1000) * 1000),
      project: k % 2 ? 'agent-runner' : 'estate',
      status: k === 1 || k === 3 ? 'failure' : k === 5 ? 'cancelled' : 'success', // dependency bump broke things
      duration_s: rnd.int(400, 900),
      ref: 'chore/deps',
      commit: rnd.hex(7),
    });
  }
  writeJsonl('builds.jsonl', rows, 'ts');
  return rows.length;
}

// ---------------------------------------------------------------- 5-7. state

function genState() {
  const rnd = rngFor('state');
  const heartbeat = {
    nodes: [
      { name: 'hub', last_seen: iso(ANCHOR - 18 * 1000), status: 'up', role: 'control', version: '1.4.2' },
      { name: 'forge', last_seen: iso(ANCHOR - 47 * 1000), status: 'up', role: 'ci', version: '1.4.2' },
      { name: 'gpu-1', last_seen: iso(ANCHOR - 71 * 1000), status: 'busy', role: 'inference', version: '1.4.1' },
      { name: 'edge-2', last_seen: iso(EDGE2_LAST_SEEN), status: 'down', role: 'edge', version: '1.3.9' },
      { name: 'rotating', last_seen: iso(ANCHOR - 104 * 1000), status: 'up', role: 'worker', version: '1.4.2' },
    ],
  };
  writeJson('state/heartbeat.json', heartbeat);

  const entries = AGENTS.map((name) => {
    const score = rnd.int(120, 1480);
    const delta = rnd.chance(0.8) ? rnd.int(1, 48) : -rnd.int(1, 15);
    const ts = ANCHOR - rnd.int(10 * 60, 23 * 3600) * 1000;
    return { name, score, ts: iso(ts), delta };
  }).sort((a, b) => b.score - a.score || a.name.localeCompare(b.name));
  writeJson('state/scoreboard.json', { updated_at: iso(ANCHOR - 4 * MIN), entries });

  const map = {
    estate: 'demo',
    nodes: [
      { name: 'hub', role: 'control', address: '10.0.0.1', services: ['estate-api', 'caddy', 'scheduler', 'backups'] },
      { name: 'forge', role: 'ci', address: '10.0.0.2', services: ['forgejo', 'forgejo-runner', 'registry'] },
      { name: 'gpu-1', role: 'inference', address: '10.0.0.10', services: ['ollama', 'model-gateway', 'trainer'] },
      { name: 'edge-2', role: 'edge', address: '10.0.0.22', services: ['caddy', 'garden-site', 'wireguard'] },
      { name: 'rotating', role: 'worker', address: '10.0.0.30', services: ['agent-runner', 'queue-worker'] },
    ],
    links: [
      { from: 'hub', to: 'forge', kind: 'lan' },
      { from: 'hub', to: 'gpu-1', kind: 'lan' },
      { from: 'hub', to: 'rotating', kind: 'lan' },
      { from: 'hub', to: 'edge-2', kind: 'wireguard' },
      { from: 'forge', to: 'rotating', kind: 'ci-dispatch' },
      { from: 'rotating', to: 'gpu-1', kind: 'inference' },
      { from: 'edge-2', to: 'forge', kind: 'deploy' },
    ],
  };
  writeJson('state/estate_map.json', map);
}

// ---------------------------------------------------------------- 8. work completions

function genCompletions() {
  const rnd = rngFor('completions');
  const boards = {
    ops: {
      verbs: ['Rotate', 'Audit', 'Tune', 'Document', 'Investigate', 'Automate', 'Silence', 'Review'],
      objects: [
        'TLS certificates on edge-2', 'nightly backup job', 'disk alert thresholds', 'log retention on hub',
        'forge runner timeouts', 'provider health checks', 'heartbeat staleness window', 'on-call runbook',
        'flaky queue alert', 'cron drift on rotating', 'caddy access logs', 'scoreboard export',
      ],
      repo: 'estate/ops-runbooks',
    },
    garden: {
      verbs: ['Draft', 'Edit', 'Publish', 'Tag', 'Prune', 'Illustrate', 'Cross-link', 'Proofread'],
      objects: [
        'November essay on tending', 'seed catalogue notes', 'poem for the winter solstice', 'reading list',
        'broken links in the archive', 'about page', 'sketch of the estate map', 'weekly changelog',
        'RSS feed descriptions', 'index of field notes', 'colophon', 'tag taxonomy',
      ],
      repo: 'estate/garden-site',
    },
    research: {
      verbs: ['Benchmark', 'Compare', 'Summarise', 'Evaluate', 'Prototype', 'Profile', 'Survey', 'Reproduce'],
      objects: [
        'quantised 8B models on gpu-1', 'embedding models for search', 'retry strategies for agents',
        'context-window usage', 'tokenizer throughput', 'fine-tune on the changelog corpus',
        'latency of local vs hosted providers', 'eval harness for summaries', 'JSONL tail-read performance',
        'speculative decoding', 'KV-cache sizing', 'prompt caching',
      ],
      repo: 'estate/research-notes',
    },
    infra: {
      verbs: ['Provision', 'Upgrade', 'Migrate', 'Harden', 'Replace', 'Expand', 'Patch', 'Reimage'],
      objects: [
        'wireguard mesh config', 'forgejo to the latest release', 'model storage to /srv/models', 'ssh config on rotating',
        'edge-2 power supply', 'hub root volume', 'kernel on gpu-1', 'node exporter on all nodes',
        'DNS records for garden', 'ansible inventory', 'UPS monitoring', 'backup target',
      ],
      repo: 'estate/infra',
    },
  };
  const summaries = [
    'Done and verified on the demo estate; no follow-up needed.',
    'Landed behind a flag; will enable after a day of quiet dashboards.',
    'Smaller change than expected once the root cause was clear.',
    'Wrote up the findings and linked them from the board.',
    'Fixed, with a regression test so it stays fixed.',
    'Completed; left two follow-up cards for the edge cases.',
    'Merged after review; metrics look steady since.',
    'Verified by hand and by the nightly check.',
  ];
  const boardWeights = [['ops', 35], ['garden', 25], ['research', 18], ['infra', 22]];
  const N = 120;
  const used = new Set();
  const rows = [];
  let taskNo = 101;
  for (let i = 0; i < N; i++) {
    const board = rnd.weighted(boardWeights);
    const b = boards[board];
    let title;
    for (let tries = 0; ; tries++) {
      title = `${rnd.pick(b.verbs)} ${rnd.pick(b.objects)}`;
      if (!used.has(title) || tries > 20) break;
    }
    used.add(title);
    taskNo += rnd.int(1, 4);
    const completedAt = ANCHOR - 10 * DAY + Math.floor(rnd.next() * (10 * DAY - 20 * MIN));
    const rec = {
      id: `wc_${rnd.hex(16)}`,
      task_id: `EST-${taskNo}`,
      board,
      assignee: rnd.pick(AGENTS),
      title,
    };
    if (rnd.chance(0.8)) rec.commit_sha = rnd.hex(rnd.chance(0.5) ? 40 : rnd.int(7, 12));
    if (rnd.chance(0.7)) {
      rec.output_url = rec.commit_sha
        ? `https://git.example.org/${b.repo}/commit/${rec.commit_sha}`
        : `https://${board === 'garden' ? 'garden' : 'notes'}.example.org/work/${slugify(title)}`;
    }
    if (rnd.chance(0.85)) rec.summary = rnd.pick(summaries);
    rec.completed_at = iso(Math.floor(completedAt / 1000) * 1000);
    rows.push(rec);
  }
  writeJsonl('work/completions.jsonl', rows, 'completed_at');
  return rows.length;
}

// ---------------------------------------------------------------- 9. publishing

function genPublishing() {
  const rnd = rngFor('publishing');
  const pieces = [
    ['essay', 'garden', 'On tending a small estate'],
    ['essay', 'blog', 'Why our agents write to files, not databases'],
    ['essay', 'garden', 'The quiet value of a health pulse'],
    ['essay', 'blog', 'Reading logs backwards'],
    ['essay', 'garden', 'What the scoreboard is not for'],
    ['essay', 'blog', 'A year of self-hosted inference'],
    ['essay', 'garden', 'Maintenance as a form of attention'],
    ['essay', 'blog', 'Idempotent writes for cron jobs'],
    ['poem', 'garden', 'Heartbeat at three in the morning'],
    ['poem', 'garden', 'Edge node, going dark'],
    ['poem', 'garden', 'Ode to a full disk'],
    ['poem', 'garden', 'Lamplighter'],
    ['poem', 'garden', 'Winter queue'],
    ['poem', 'notes', 'Five haiku for the forge'],
    ['note', 'notes', 'Pinning the runner image'],
    ['note', 'notes', 'fsync is not optional'],
    ['note', 'notes', 'Staleness thresholds, revisited'],
    ['note', 'notes', 'Quantisation notes for gpu-1'],
    ['note', 'notes', 'Wireguard MTU gotcha'],
    ['note', 'notes', 'Cleaning up old checkpoints'],
    ['note', 'notes', 'How the ferry agent hands off work'],
    ['note', 'garden', 'Field note: first frost'],
    ['note', 'notes', 'Torn lines and how to skip them'],
    ['note', 'notes', 'Rotating node naming'],
    ['sketch', 'garden', 'Map of the estate, autumn edition'],
    ['sketch', 'garden', 'The build storm, drawn'],
    ['sketch', 'blog', 'Request flow through the hub'],
    ['sketch', 'garden', 'Agents at work'],
    ['sketch', 'notes', 'Disk usage over two weeks'],
    ['changelog', 'blog', 'Changelog 2026 week 39'],
    ['changelog', 'blog', 'Changelog 2026 week 40'],
    ['changelog', 'blog', 'Changelog 2026 week 41'],
    ['changelog', 'blog', 'Changelog 2026 week 42'],
    ['changelog', 'blog', 'Changelog 2026 week 43'],
    ['changelog', 'blog', 'Changelog 2026 week 44'],
    ['changelog', 'blog', 'Changelog 2026 week 45'],
    ['changelog', 'blog', 'Changelog 2026 week 46'],
    ['changelog', 'blog', 'Changelog 2026 week 47'],
    ['essay', 'blog', 'Estate 1.4: events, demo mode and a man page'],
    ['note', 'garden', 'Seed swap, and what came up'],
  ];
  const summaries = {
    essay: ['A longer piece on how the estate is run and why.', 'Thoughts gathered over a few weeks of operating the estate.'],
    poem: ['A short poem written between deploys.', 'Verse, lightly edited.'],
    note: ['A short working note, kept for future reference.', 'Quick note so we do not relearn this.'],
    sketch: ['A hand-drawn diagram with a few annotations.', 'A sketch, scanned and tidied.'],
    changelog: ['What changed across the estate this week.', 'Weekly summary of merged work and incidents.'],
  };
  const rows = [];
  const seen = new Set();
  pieces.forEach(([contentType, site, title], i) => {
    const slug = slugify(title);
    const key = `${site}/${slug}`;
    if (seen.has(key)) throw new Error(`duplicate slug ${key}`);
    seen.add(key);
    let publishedAt;
    const m = /week (\d+)$/.exec(title);
    if (m) {
      // changelogs go out on Fridays 16:00 UTC of their ISO week (2026-W39 Friday = 2026-09-25)
      publishedAt = Date.parse('2026-09-25T16:00:00.000Z') + (Number(m[1]) - 39) * 7 * DAY;
    } else {
      publishedAt = ANCHOR - 60 * DAY + Math.floor(rnd.next() * (59 * DAY));
    }
    publishedAt = Math.floor(publishedAt / MIN) * MIN;
    const registeredAt = publishedAt + rnd.int(20, 900) * 1000 + rnd.int(0, 999);
    const rec = {
      entry_id: `pub_${rnd.hex(16)}`,
      title,
      slug,
      content_type: contentType,
      target_site: site,
    };
    if (i % 13 !== 5) rec.url = `https://${site}.example.org/${slug}`;
    if (rnd.chance(0.8)) rec.summary = rnd.pick(summaries[contentType]);
    if (i % 9 !== 4) rec.published_at = iso(publishedAt);
    rec.registered_at = iso(registeredAt);
    rows.push(rec);
  });
  writeJsonl('publishing/entries.jsonl', rows, 'registered_at');
  return rows.length;
}

// ---------------------------------------------------------------- 10-11. repos, config, readme

function genMisc() {
  const repos = [
    ['estate/estate', 'The estate operations toolkit: CLI and HTTP API.'],
    ['estate/ledger-tools', 'Small tools for keeping the repository ledger and scoreboard honest.'],
    ['estate/garden-site', 'Source of the garden site: essays, poems, notes and sketches.'],
    ['estate/agent-runner', 'Runs scheduled agents on the rotating node and reports completions.'],
    ['estate/model-gateway', 'One OpenAI-compatible front door for local and hosted models.'],
    ['estate/infra', 'Ansible, wireguard and backup configuration for every node.'],
  ].map(([name, description]) => ({ name, url: `https://git.example.org/${name}`, description }));
  writeJson('repos.json', repos);

  // The external sources are unreachable on purpose (nothing listens on
  // loopback port 2, a privileged port no service uses) and there is no
  // statistics command: the demo shows how estate answers when the forge and
  // a provider are down.
  writeJson('estate.config.json', {
    node_name: 'hub',
    forge: { url: 'http://127.0.0.1:2', timeout_ms: 1000, cache_s: 30 },
    providers: [{ name: 'ollama', url: 'http://127.0.0.1:2/api/tags', timeout_ms: 1000, expect_status: 200 }],
    providers_cache_s: 30,
    identity: {
      name: 'The Demo Estate',
      tagline: 'A small estate of nodes and agents, tended in the open.',
      links: [{ label: 'garden', url: 'https://garden.example.org' }],
    },
  });

  write(
    'README.md',
    '# demo-estate\n\n' +
      'This directory is generated by `scripts/make-demo-estate.mjs`; do not edit it by hand, ' +
      'change the script and rerun `node scripts/make-demo-estate.mjs` instead (the output is ' +
      'deterministic). All timestamps are anchored at 2026-11-22T00:00:00.000Z and are shifted ' +
      'to the present by `estate serve --demo`, so the data always looks recent.\n',
  );
}

// ---------------------------------------------------------------- main

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT, { recursive: true });
const counts = {
  trends: genTrends(),
  disk: genDisk(),
  'health-pulse': genHealthPulse(),
  builds: genBuilds(),
};
genState();
counts.completions = genCompletions();
counts.publishing = genPublishing();
genMisc();
console.log(
  `wrote ${OUT}: ` +
    Object.entries(counts)
      .map(([k, v]) => `${k}=${v}`)
      .join(' '),
);
