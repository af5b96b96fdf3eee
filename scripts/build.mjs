// Bundles the CLI, with its dependencies, into dist/ with esbuild: one
// minified file for the start-up path and lazily imported chunks for the
// server, the docs and the rest, so `estate` starts fast and needs no
// TypeScript at run time. Builds into a fresh folder and swaps it in, so a
// run of the CLI never sees a half-written dist/.
import { build } from 'esbuild';
import { renameSync, rmSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const dist = path.join(root, 'dist');
const next = path.join(root, `.dist-${process.pid}`);

// zod bundles every locale's error messages; estate speaks English only, and
// the other 40-odd locales would be parsed at every start.
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${path.sep}zod${path.sep}`) ? { path: path.join(path.dirname(args.importer), '..', 'locales', 'index.js'), namespace: 'zod-en' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-en' }, (args) => ({ contents: "export { default as en } from './en.js';", loader: 'js', resolveDir: path.dirname(args.path) }));
  },
};

try {
  await build({
    entryPoints: { estate: path.join(root, 'src/cli/main.ts') },
    outdir: next,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    minify: true,
    keepNames: true,
    sourcemap: 'linked',
    legalComments: 'linked',
    // CommonJS dependencies bundled into ESM still call require() for Node's built-ins.
    banner: { js: "import { createRequire as __estateRequire } from 'node:module'; const require = __estateRequire(import.meta.url);" },
    plugins: [zodEnglishOnly],
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
