import { chmod, cp, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DATA_FILES } from './data-files.ts';
import { tailRecords } from './jsonl/tail-records.ts';

/** Fields of the demo data that hold times, moved to the present on copy. */
const TIME_KEYS = new Set(['ts', 'last_seen', 'updated_at', 'completed_at', 'registered_at', 'published_at', 'created_at']);

/**
 * Copies the demo estate to `dest` and moves every time in it forward so its
 * newest trend point is `now`: the demo always looks live. Like every data
 * dir estate creates, the copy is its owner's only (folders 0700, files 0600),
 * whatever the checkout's modes and the umask.
 */
export async function copyDemoEstate(source: string, dest: string, now: Date): Promise<void> {
  await cp(source, dest, { recursive: true });
  await chmod(dest, 0o700);
  for (const entry of await readdir(dest, { withFileTypes: true, recursive: true })) {
    await chmod(path.join(entry.parentPath ?? entry.path, entry.name), entry.isDirectory() ? 0o700 : 0o600);
  }
  const { records } = await tailRecords(path.join(source, DATA_FILES.trends), 1);
  const anchor = Date.parse(String(records[0]?.ts));
  if (Number.isNaN(anchor)) return;
  const shift = now.getTime() - anchor;
  for (const file of await listFiles(dest)) {
    if (file.endsWith('.jsonl')) {
      const text = await readFile(file, 'utf8');
      const lines = text.split('\n').map((line) => (line.trim() ? JSON.stringify(shiftTimes(JSON.parse(line), shift)) : line));
      await writeFile(file, lines.join('\n'));
    } else if (file.includes(`${path.sep}state${path.sep}`) && file.endsWith('.json')) {
      const data: unknown = JSON.parse(await readFile(file, 'utf8'));
      await writeFile(file, `${JSON.stringify(shiftTimes(data, shift), null, 2)}\n`);
    }
  }
}

function shiftTimes(value: unknown, shift: number, key?: string): unknown {
  if (Array.isArray(value)) return value.map((v) => shiftTimes(v, shift));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shiftTimes(v, shift, k)]));
  }
  if (key && TIME_KEYS.has(key) && typeof value === 'string') {
    const t = Date.parse(value);
    if (!Number.isNaN(t)) return new Date(t + shift).toISOString();
  }
  return value;
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath ?? e.path, e.name));
}
