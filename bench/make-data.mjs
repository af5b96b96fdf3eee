// Generates benchmark data dirs, cached under bench/data/ (which git ignores),
// or under $BENCH_DATA_DIR when set (e.g. a folder under /tmp shared by runs).
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const BENCH_DATA = process.env.BENCH_DATA_DIR ? path.resolve(process.env.BENCH_DATA_DIR) : path.resolve(import.meta.dirname, 'data');
const UNITS = { MB: 1024 ** 2, GB: 1024 ** 3 };

/** `1MB` → 1048576. */
export function parseSize(label) {
  const m = /^(\d+)(MB|GB)$/.exec(label.trim());
  if (!m) throw new Error(`bad size ${label}: use e.g. 1MB, 100MB, 1GB`);
  return Number(m[1]) * UNITS[m[2]];
}

async function writeLines(file, bytes, count, line) {
  mkdirSync(path.dirname(file), { recursive: true });
  const out = createWriteStream(file);
  let written = 0;
  for (let i = 0; written < bytes && i < count; ) {
    const lines = [];
    for (let j = 0; j < 1000 && i < count; j++, i++) lines.push(line(i));
    const chunk = `${lines.join('\n')}\n`;
    written += Buffer.byteLength(chunk);
    if (!out.write(chunk)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((r) => out.end(r));
}

/** A data dir whose trends.jsonl holds at least `bytes` bytes of points. */
export async function trendsDir(label) {
  const dir = path.join(BENCH_DATA, `trends-${label}`);
  const file = path.join(dir, 'trends.jsonl');
  const bytes = parseSize(label);
  if (existsSync(file) && statSync(file).size >= bytes) return dir;
  const start = Date.parse('2020-01-01T00:00:00Z');
  await writeLines(file, bytes, Infinity, (i) =>
    JSON.stringify({ ts: new Date(start + i * 1000).toISOString(), node: `n${i % 7}`, cpu_pct: (i * 37) % 100, mem_pct: (i * 11) % 100, seq: i }),
  );
  return dir;
}

export const BOARDS = Array.from({ length: 20 }, (_, i) => `board-${i}`);

/**
 * A data dir whose work/completions.jsonl holds `count` completions over 20
 * boards; with `summaryChars`, each also has a summary of that many
 * characters (about 1,000 make a `/work/feed?limit=1000` answer of 1 MiB).
 */
export async function completionsDir(count, { summaryChars = 0 } = {}) {
  const dir = path.join(BENCH_DATA, summaryChars ? `completions-${count}-summary-${summaryChars}` : `completions-${count}`);
  const file = path.join(dir, 'work', 'completions.jsonl');
  if (existsSync(file) && statSync(file).size > count * (100 + summaryChars)) return dir;
  const start = Date.parse('2024-01-01T00:00:00Z');
  await writeLines(file, Infinity, count, (i) =>
    JSON.stringify({
      id: `wc_${i.toString(16).padStart(16, '0')}`,
      task_id: `T-${i}`,
      board: BOARDS[i % BOARDS.length],
      assignee: `agent-${i % 13}`,
      title: `Task number ${i} of the benchmark`,
      commit_sha: (i * 2654435761).toString(16).padStart(8, '0').slice(0, 8),
      ...(summaryChars ? { summary: `Done: ${i} `.padEnd(summaryChars, 'abcdefghij ') } : {}),
      completed_at: new Date(start + i * 30_000).toISOString(),
    }),
  );
  return dir;
}

/** A data dir whose trends.jsonl holds `nodeCount` nodes × `each` points, interleaved, oldest first. */
export async function hubDir(nodeCount, each) {
  const dir = path.join(BENCH_DATA, `hub-${nodeCount}x${each}`);
  const file = path.join(dir, 'trends.jsonl');
  if (existsSync(path.join(dir, '.done'))) return dir;
  mkdirSync(dir, { recursive: true });
  process.stderr.write(`writing ${nodeCount} × ${each} trend points to ${file}…\n`);
  const out = createWriteStream(file);
  const start = Date.UTC(2026, 0, 1);
  let chunk = '';
  for (let i = 0; i < each; i++) {
    const ts = new Date(start + i * 10_000).toISOString();
    for (let n = 0; n < nodeCount; n++) {
      chunk += `{"ts":"${ts}","node":"n${n}","cpu_pct":${(i * 7 + n) % 100},"load1":${((i + n) % 400) / 100},"load5":0.5,"load15":0.4,"mem_total_bytes":16777216000,"mem_used_bytes":${8000000000 + ((i * 13 + n) % 1000000)},"mem_used_pct":47.7,"mem_scope":"host","swap_used_bytes":0,"uptime_s":${i * 10}}\n`;
    }
    if (chunk.length > 1 << 20) {
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  out.end(chunk);
  await once(out, 'finish');
  writeFileSync(path.join(dir, '.done'), '');
  return dir;
}
