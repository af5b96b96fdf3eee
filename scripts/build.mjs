// Bundles the CLI and its dependencies into one minified CommonJS file,
// dist/estate.cjs, with esbuild. bin/estate compiles it with a V8 code cache
// (in the user's cache folder, warmed here; one per bundle path and set of
// node flags, naming the build id this build puts on the bundle's first
// line), so a start pays neither module resolution nor parsing; modules a command imports lazily (the server, jose, the
// table renderer) run only when that command does. The operation commands
// come from a manifest worked out here (src/cli/operation-manifest.ts), so a
// command line builds only the schemas of the operation it runs. Builds into
// a fresh folder and swaps it in, so a running CLI never sees a half-written
// dist/.
//
// dist/ is everything an installed estate needs besides bin/, man/ and the
// demo fixtures (package.json `files`): the bundle, the licences of the
// packages bundled into it (THIRD-PARTY-LICENSES.txt), and under docs-assets/
// the Swagger UI and ReDoc files /api/docs and /api/redoc serve, each beside
// its package's licence, and under dashboard-assets/ the dashboard's script
// and stylesheet (scripts/build-dashboard.mjs). So an installed estate has
// no dependencies.
import { build } from 'esbuild';
import { buildDashboard } from './build-dashboard.mjs';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
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

// prom-client's process CPU counter asks @opentelemetry/api for the active
// span, to attach an exemplar when exemplars are enabled; estate enables
// none, so the 21 KB API is replaced by the two calls it makes, answering
// "no span" (what the API itself answers with no tracer registered).
const noTracing = {
  name: 'no-tracing',
  setup(b) {
    b.onResolve({ filter: /^@opentelemetry\/api$/ }, () => ({ path: 'otel-api', namespace: 'no-tracing' }));
    b.onLoad({ filter: /.*/, namespace: 'no-tracing' }, () => ({
      contents: 'module.exports = { context: { active: () => undefined }, trace: { getSpan: () => undefined } };',
      loader: 'js',
    }));
  },
};

// Two rewrites of estate's own sources as they are bundled, neither changing
// what the code does:
// - `import { z } from 'zod'` is zod's namespace object, which esbuild keeps
//   whole (JSON Schema import, every check and format, ~100 KB, run at every
//   start). Read as `import * as z` of the same module, only what estate
//   calls is bundled. The same objects either way.
// - characters outside ASCII become \u escapes. esbuild escapes them in
//   strings, but not in tagged templates (html`… · …`), whose raw text it
//   must keep; estate's tags read the cooked text, where an escape is the
//   same character. A bundle all ASCII is a one-byte string for V8: read,
//   kept and compiled at half the cost of a two-byte one.
const zodExternal = path.join(root, 'node_modules', 'zod', 'v4', 'classic', 'external.js');
const sourceRewrites = {
  name: 'source-rewrites',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (!args.path.startsWith(path.join(root, 'src') + path.sep)) return undefined;
      const text = readFileSync(args.path, 'utf8')
        .replace(/^import \{ z \} from 'zod';$/m, `import * as z from ${JSON.stringify(zodExternal)};`)
        .replace(/[^\0-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
      return { contents: text, loader: 'ts' };
    });
  },
};

// commander loads node:child_process at start for executable subcommands,
// which estate has none of: it loads on first use instead.
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(b) {
    b.onResolve({ filter: /^(node:)?child_process$/ }, (args) => (args.importer.includes(`${path.sep}commander${path.sep}`) ? { path: 'child_process', namespace: 'lazy-child-process' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'lazy-child-process' }, () => ({
      contents: "module.exports = new Proxy({}, { get: (_, name) => require('node:child_process')[name] });",
      loader: 'js',
    }));
  },
};

// The sources are ES modules: give them their own URL back, worked out when
// asked (few commands ask).
const moduleUrl = {
  define: { 'import.meta.url': '__estateModule.url' },
  banner: { js: "const __estateModule = { get url() { return require('node:url').pathToFileURL(__filename).href; } };" },
};

/**
 * Bundles `source` (TypeScript importing the sources, from the project root)
 * into `into`, runs it with node and returns what it printed: how the build
 * works out what the bundle carries ready-made.
 */
async function runGenerator(into, name, source) {
  const file = path.join(into, `${name}.cjs`);
  await build({
    stdin: { contents: source, resolveDir: root, loader: 'ts', sourcefile: `${name}-generator.ts` },
    outfile: file,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    ...moduleUrl,
    plugins: [zodEnglishOnly],
    logLevel: 'warning',
  });
  const run = spawnSync(process.execPath, [file], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  rmSync(file, { force: true });
  if (run.status !== 0) throw new Error(`the ${name} could not be worked out:\n${run.stderr}`);
  return run.stdout;
}

/**
 * The config's defaults as JSON (src/config.ts defaultConfig): the bundle
 * carries them, so a command run without a config file builds no config
 * schema. Worked out from the schemas themselves, and checked to survive a
 * JSON round trip unchanged.
 */
function configDefaults(into) {
  return runGenerator(into, 'config defaults', [
    "import { isDeepStrictEqual } from 'node:util';",
    "import { configSchema } from './src/config.ts';",
    'const defaults = configSchema().parse({});',
    'const json = JSON.stringify(defaults);',
    "if (!isDeepStrictEqual(JSON.parse(json), defaults)) throw new Error('the config defaults do not survive JSON');",
    'process.stdout.write(json);',
  ].join('\n'));
}

/**
 * The module that replaces src/cli/operation-manifest.ts in the bundle: the
 * operation commands' manifest (src/cli/command-manifest.ts), worked out
 * here by running the operations table once, and for each operation a loader
 * that imports only its own module (found by looking for the operation among
 * the exports of src/api/operations/*.ts).
 */
async function operationManifestModule(into) {
  const opsDir = path.join(root, 'src', 'api', 'operations');
  const files = readdirSync(opsDir).filter((f) => f.endsWith('.ts') && f !== 'index.ts').sort();
  const output = await runGenerator(into, 'operation manifest', [
    "import { operations } from './src/api/operations/index.ts';",
    "import { commandManifest } from './src/cli/command-manifest.ts';",
    ...files.map((f, i) => `import * as m${i} from './src/api/operations/${f}';`),
    `const modules = { ${files.map((f, i) => `${JSON.stringify(f)}: m${i}`).join(', ')} };`,
    'const where = {};',
    'for (const [file, mod] of Object.entries(modules)) for (const [name, value] of Object.entries(mod)) if (operations.includes(value)) where[value.id] = [file, name];',
    'process.stdout.write(JSON.stringify({ commands: commandManifest(operations), where }));',
  ].join('\n'));
  const { commands, where } = JSON.parse(output);
  const ids = [...new Set(commands.flatMap((c) => (c.run ? c.run.variants.map(([, id]) => id) : [])))];
  const loaders = ids.map((id) => {
    if (!where[id]) throw new Error(`operation ${id} is in the table but exported by no module of src/api/operations`);
    const [module, name] = where[id];
    return `  ${JSON.stringify(id)}: () => import(${JSON.stringify(`../api/operations/${module}`)}).then((m) => m.${name}),`;
  });
  return [
    '// Made by scripts/build.mjs from the operations table: see src/cli/operation-manifest.ts.',
    `export const OPERATION_COMMANDS = JSON.parse(${JSON.stringify(JSON.stringify(commands))});`,
    `const LOADERS = {\n${loaders.join('\n')}\n};`,
    'export async function loadOperation(id) {',
    '  const load = LOADERS[id];',
    '  if (!load) throw new Error(`no operation ${id}`);',
    '  return load();',
    '}',
  ].join('\n');
}

/** Builds with `contents` in place of src/cli/operation-manifest.ts. */
function operationManifest(contents) {
  const file = path.join(root, 'src', 'cli', 'operation-manifest.ts');
  return {
    name: 'operation-manifest',
    setup(b) {
      b.onLoad({ filter: /operation-manifest\.ts$/ }, (args) => (args.path === file ? { contents, loader: 'js', resolveDir: path.dirname(file) } : undefined));
    },
  };
}

/**
 * The files of the docs viewers' packages that estate serves (the allow-lists
 * of src/server/docs-routes.ts), with their licence files; copied to
 * dist/docs-assets/<package>/<same path>.
 */
const DOCS_ASSETS = {
  'swagger-ui-dist': ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png', 'swagger-ui-bundle.js.LICENSE.txt', 'LICENSE', 'NOTICE'],
  redoc: ['bundles/redoc.standalone.js', 'bundles/redoc.standalone.js.LICENSE.txt', 'LICENSE'],
};

const require = createRequire(import.meta.url);
const packageDir = (name) => path.dirname(require.resolve(`${name}/package.json`));

function copyDocsAssets(into) {
  for (const [pkg, files] of Object.entries(DOCS_ASSETS)) {
    for (const file of files) {
      const to = path.join(into, 'docs-assets', pkg, file);
      mkdirSync(path.dirname(to), { recursive: true });
      copyFileSync(path.join(packageDir(pkg), file), to);
    }
  }
}

/** SPDX ids of public-domain dedications. */
const PUBLIC_DOMAIN = new Set(['Unlicense', 'CC0-1.0']);

/** The name, version and licence text of every npm package with a file in the bundle. */
function thirdPartyLicenses(metafile) {
  const dirs = new Set();
  // Inputs are paths relative to the working folder; plugin-made ones are `namespace:path`.
  for (const input of Object.keys(metafile.inputs)) {
    if (/^[\w-]+:/.test(input)) continue;
    const m = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input.split(path.sep).join('/'));
    if (m) dirs.add(path.resolve(root, m[1]));
  }
  const sections = [...dirs].map((dir) => {
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const licenceFile = readdirSync(dir).find((f) => /^(licen[cs]e|copying)([-.][\w.-]+)?$/i.test(f));
    // A public-domain dedication asks for no notice; such packages may ship no licence file (postgres).
    if (!licenceFile && PUBLIC_DOMAIN.has(pkg.license)) return `${pkg.name} ${pkg.version} (${pkg.license})\n\nDedicated to the public domain; the package ships no licence file.\n`;
    if (!licenceFile) throw new Error(`${pkg.name} is bundled but ships no licence file`);
    return `${pkg.name} ${pkg.version} (${pkg.license})\n\n${readFileSync(path.join(dir, licenceFile), 'utf8').trim()}\n`;
  });
  sections.sort();
  return `The packages bundled into estate.cjs, with their licences.\n\n${sections.join(`\n${'-'.repeat(72)}\n\n`)}`;
}

try {
  mkdirSync(next, { recursive: true });
  const manifest = await operationManifestModule(next);
  const defaults = await configDefaults(next);
  // Keys what the CLI caches of itself: another build, another meaning (bin/estate, src/checked-config-cache.ts).
  const buildId = randomUUID();
  const result = await build({
    entryPoints: [path.join(root, 'src/cli/main.ts')],
    outfile: path.join(next, 'estate.cjs'),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    minify: true,
    keepNames: false,
    sourcemap: 'linked',
    // Each bundled package's whole licence goes to THIRD-PARTY-LICENSES.txt.
    legalComments: 'none',
    metafile: true,
    ...moduleUrl,
    // The first line names the build for bin/estate's code cache; the bundle knows it as __ESTATE_BUILD_ID__.
    banner: { js: `// estate build ${buildId}\n${moduleUrl.banner.js}` },
    define: { ...moduleUrl.define, __ESTATE_CONFIG_DEFAULTS__: JSON.stringify(defaults), __ESTATE_BUILD_ID__: JSON.stringify(buildId) },
    plugins: [zodEnglishOnly, operationManifest(manifest), sourceRewrites, lazyChildProcess, noTracing],
    logLevel: 'warning',
  });
  const dashboard = await buildDashboard(next);
  writeFileSync(path.join(next, 'THIRD-PARTY-LICENSES.txt'), thirdPartyLicenses({ inputs: { ...result.metafile.inputs, ...dashboard.inputs } }));
  copyDocsAssets(next);
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
