// The `prepare` script, run by `npm install` and `npm ci` in a checkout:
// builds dist/ when the dev dependencies (esbuild) are installed, so a fresh
// clone's `npm install && npm start` works. A production install
// (`npm ci --omit=dev`) has nothing to build with: it skips, with one line
// when there is no dist/ yet. `npm pack` and `npm publish` build in `prepack`
// instead, where a missing esbuild is an error.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
if (process.env.npm_command === 'pack' || process.env.npm_command === 'publish') process.exit(0);
try {
  createRequire(import.meta.url).resolve('esbuild');
} catch {
  if (!existsSync(path.join(root, 'dist', 'estate.cjs'))) {
    process.stderr.write('estate: dev dependencies are not installed, so dist/ is not built; `npm install` (with dev dependencies) builds it\n');
  }
  process.exit(0);
}
const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
process.exit(build.status ?? 1);
