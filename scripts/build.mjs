// Bundles the CLI into dist/ with esbuild: one file for the start-up path,
// with lazily imported chunks, so `estate` starts fast and needs no TypeScript.
// Builds into a fresh folder and swaps it in, so a run of the CLI never sees
// a half-written dist/.
import { build } from 'esbuild';
import { renameSync, rmSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const dist = path.join(root, 'dist');
const next = path.join(root, `.dist-${process.pid}`);
try {
  await build({
    entryPoints: { estate: path.join(root, 'src/cli/main.ts') },
    outdir: next,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  const old = path.join(root, `.dist-old-${process.pid}`);
  try {
    renameSync(dist, old);
  } catch {}
  renameSync(next, dist);
  rmSync(old, { recursive: true, force: true });
} finally {
  rmSync(next, { recursive: true, force: true });
}
