// Bundles the CLI and its dependencies into one minified CommonJS file,
// dist/estate.cjs, with esbuild. bin/estate compiles it with a V8 code cache
// (dist/estate.cjs.cache), so a start pays neither module resolution nor
// parsing; modules a command imports lazily (the server, jose, chokidar, the
// table renderer) run only when that command does. Builds into a fresh folder
// and swaps it in, so a running CLI never sees a half-written dist/.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { renameSync, rmSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const dist = path.join(root, 'dist');
const next = path.join(root, `.dist-${process.pid}`);

// zod bundles every locale's error messages; estate speaks English only, and
// the other 40-odd locales would be compiled at every start.
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
    entryPoints: [path.join(root, 'src/cli/main.ts')],
    outfile: path.join(next, 'estate.cjs'),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    minify: true,
    keepNames: true,
    sourcemap: 'linked',
    legalComments: 'linked',
    // The sources are ES modules: give them their own URL back.
    define: { 'import.meta.url': '__estateModuleUrl' },
    banner: { js: "const __estateModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
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
// Warm the code cache with the start-up path of a read command.
spawnSync(process.execPath, [path.join(root, 'bin', 'estate'), 'trends', '--limit', '1', '--json', '--data-dir', path.join(root, 'fixtures', 'demo-estate')], { stdio: 'ignore' });
