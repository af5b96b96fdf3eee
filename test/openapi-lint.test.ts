import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { ROOT, tempDataDir } from './helpers/data-dir.ts';
import { startServer } from './helpers/server.ts';

// The served document, linted by two tools nobody here wrote: Redocly CLI with
// its `recommended` rules and Spectral with `spectral:oas`. Errors fail the
// test; warnings are printed (the ones left are deliberate: scopes listed as
// roles of non-OAuth schemes, which OpenAPI 3.1 allows and Spectral predates;
// no contact).
// Each tool starts once (their start-up is most of their time).

const run = promisify(execFile);
const bin = (name: string) => path.join(ROOT, 'node_modules', '.bin', name);
const quiet = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };

interface Linted {
  errors: string[];
  warnings: string[];
}

async function lintWorkspace(t: Parameters<typeof tempDataDir>[0]): Promise<string> {
  const server = await startServer(t, await tempDataDir(t));
  const r = await server.get('/api/openapi.json');
  assert.equal(r.status, 200);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'estate-lint-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(path.join(dir, 'openapi.json'), r.text);
  return dir;
}

/** A tool's run: its stdout whatever its exit status (both exit 1 when they find errors). */
async function stdoutOf(file: string, args: string[], cwd: string): Promise<string> {
  try {
    return (await run(file, args, { cwd, env: quiet, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 })).stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; code?: unknown };
    if (typeof e.stdout === 'string' && /^[[{]/.test(e.stdout.trim())) return e.stdout;
    throw new Error(`${path.basename(file)} failed (${String(e.code)}): ${e.stderr ?? ''}`);
  }
}

async function redocly(dir: string): Promise<Linted> {
  const out = JSON.parse(await stdoutOf(bin('redocly'), ['lint', '--extends=recommended', '--format=json', 'openapi.json'], dir)) as {
    totals: { errors: number; warnings: number };
    problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
  };
  const line = (p: (typeof out.problems)[number]) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`;
  const linted = { errors: out.problems.filter((p) => p.severity === 'error').map(line), warnings: out.problems.filter((p) => p.severity !== 'error').map(line) };
  assert.equal(linted.errors.length, out.totals.errors, 'every error is listed');
  return linted;
}

async function spectral(dir: string): Promise<Linted> {
  await writeFile(path.join(dir, '.spectral.yaml'), 'extends: ["spectral:oas"]\n');
  const out = JSON.parse(await stdoutOf(bin('spectral'), ['lint', '--ruleset', '.spectral.yaml', '--format', 'json', 'openapi.json'], dir)) as {
    code: string;
    severity: number;
    message: string;
    path: string[];
  }[];
  const line = (p: (typeof out)[number]) => `${p.code} ${p.path.join('.')}: ${p.message}`;
  // Spectral's severities: 0 error, 1 warning, 2 information, 3 hint.
  return { errors: out.filter((p) => p.severity === 0).map(line), warnings: out.filter((p) => p.severity > 0).map(line) };
}

function tally(lines: string[]): string {
  const counts = new Map<string, number>();
  for (const l of lines) counts.set(l.split(' ')[0] as string, (counts.get(l.split(' ')[0] as string) ?? 0) + 1);
  return [...counts].map(([rule, n]) => `${rule}: ${n}`).join(', ') || 'none';
}

test('Redocly CLI (recommended rules) and Spectral (spectral:oas) find no error in the served document', async (t) => {
  const dir = await lintWorkspace(t);
  const [byRedocly, bySpectral] = await Promise.all([redocly(dir), spectral(dir)]);
  t.diagnostic(`Redocly warnings: ${tally(byRedocly.warnings)}`);
  t.diagnostic(`Spectral warnings: ${tally(bySpectral.warnings)}`);
  assert.deepEqual(byRedocly.errors, [], 'Redocly errors');
  assert.deepEqual(bySpectral.errors, [], 'Spectral errors');
  // What the issue named: no tag and no operation without a description, a servers entry.
  // Also: every shared component is used (405 too), and every operation lists a 4xx.
  for (const rule of ['tag-description', 'operation-description', 'no-empty-servers', 'oas3-api-servers', 'info-license', 'info-description', 'no-unused-components', 'oas3-unused-component', 'operation-4xx-response']) {
    assert.ok(![...byRedocly.warnings, ...bySpectral.warnings].some((w) => w.startsWith(`${rule} `)), `${rule} is clean`);
  }
});
