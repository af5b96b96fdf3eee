// `npm test`: build the CLI (the tests run the real binary), then run every
// test/**/*.test.ts with node:test through tsx. Node 20 does not expand
// globs itself, so the files are listed here.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { stdio: 'inherit', cwd: root });
if (build.status !== 0) process.exit(build.status ?? 1);

const only = process.argv.slice(2);
const files = readdirSync(path.join(root, 'test'), { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => path.join('test', f))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
// A test that hangs fails after 5 minutes instead of holding the run (the slowest take about 20 s).
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-timeout=300000', '--test-reporter=spec', ...files], { stdio: 'inherit', cwd: root });
process.exit(result.status ?? 1);
