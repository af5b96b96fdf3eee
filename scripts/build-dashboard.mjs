// Bundles the dashboard's browser code (src/dashboard/, with uPlot from its
// npm package) into <into>/dashboard-assets/dashboard.js, and its stylesheet
// (src/dashboard/dashboard.css after uPlot's own) into dashboard.css, both
// minified, each beside its brotli and gzip forms, with uPlot's licence. Called by scripts/build.mjs;
// GET /dashboard/assets/{file} serves these files.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const require = createRequire(import.meta.url);

/** Builds the dashboard's assets into `into`; returns the script's esbuild metafile (for the licences of what it bundles). */
export async function buildDashboard(into) {
  const out = path.join(into, 'dashboard-assets');
  mkdirSync(out, { recursive: true });
  const script = await build({
    entryPoints: [path.join(root, 'src', 'dashboard', 'main.ts')],
    outfile: path.join(out, 'dashboard.js'),
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
    minify: true,
    legalComments: 'none',
    metafile: true,
    charset: 'utf8',
    logLevel: 'warning',
  });
  const uplotDir = path.dirname(require.resolve('uplot/package.json'));
  const style = await build({
    stdin: { contents: readFileSync(path.join(root, 'src', 'dashboard', 'dashboard.css'), 'utf8'), loader: 'css', resolveDir: root },
    write: false,
    minify: true,
    logLevel: 'warning',
  });
  const uplotCss = readFileSync(path.join(uplotDir, 'dist', 'uPlot.min.css'), 'utf8');
  writeFileSync(path.join(out, 'dashboard.css'), `${uplotCss}\n${style.outputFiles[0].text}`);
  // Compressed here, once, at the highest levels (the server sends the form the client accepts).
  for (const file of ['dashboard.js', 'dashboard.css']) {
    const raw = readFileSync(path.join(out, file));
    writeFileSync(path.join(out, `${file}.br`), brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: raw.length } }));
    writeFileSync(path.join(out, `${file}.gz`), gzipSync(raw, { level: 9 }));
  }
  copyFileSync(path.join(uplotDir, 'LICENSE'), path.join(out, 'uplot-LICENSE'));
  return script.metafile;
}
