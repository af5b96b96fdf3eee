// The package.json that `npm pack` and `npm publish` ship. The checkout's
// has scripts for development (build, test, prepare, …) that run files the
// package does not ship (scripts/, test/, bench/); an installed package
// carrying them makes npm warn about install scripts it cannot run. So:
//
//   prepack:  builds dist/, then puts the packed manifest in package.json's
//             place: the same, with only the scripts that run shipped files
//             (`start`). The checkout's own is kept in .package.json.packing.
//   postpack: puts the checkout's back.
//
// npm runs postpack only when the pack succeeded: for a pack that fails or is
// stopped in between, prepack leaves a small watcher process behind that puts
// the checkout's package.json back as soon as npm has exited (if postpack has
// not already), and a later prepack puts back one left over before it starts.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const manifestFile = path.join(root, 'package.json');
const kept = path.join(root, '.package.json.packing');

/** Puts the checkout's package.json back, if it is away; true if it was. */
function restore() {
  try {
    renameSync(kept, manifestFile);
    return true;
  } catch (err) {
    if (err.code === 'ENOENT') return false;
    throw err;
  }
}

/** Paths a script names (words with a slash, or ending in a script's extension). */
export function pathsNamed(script) {
  return script
    .split(/\s+/)
    .map((word) => word.replace(/^["']|["']$/g, ''))
    .filter((word) => /^(\.\/)?[\w@.-]+(\/[\w@.-]+)+$/.test(word) || /^[\w@./-]+\.(m?js|cjs|ts|sh)$/.test(word))
    .map((word) => word.replace(/^\.\//, ''));
}

/** Whether `file` is in the package, by package.json `files` (folders end in a slash). */
export function shipped(files, file) {
  return files.some((entry) => (entry.endsWith('/') ? file.startsWith(entry) : file === entry || file.startsWith(`${entry}/`)));
}

/** The manifest to ship: `manifest` with only the scripts that run shipped files. */
export function packedManifest(manifest) {
  const files = manifest.files ?? [];
  const scripts = Object.entries(manifest.scripts ?? {}).filter(([, script]) => {
    const paths = pathsNamed(script);
    return paths.length > 0 && paths.every((p) => shipped(files, p));
  });
  const packed = { ...manifest, scripts: Object.fromEntries(scripts) };
  if (scripts.length === 0) delete packed.scripts;
  return packed;
}

/**
 * The pid of the npm process running this script: the parent, or the
 * parent's parent when the parent is the shell npm ran the script with.
 * Undefined where `ps` cannot say (then only postpack restores).
 */
function npmPid() {
  const ask = (pid, field) => {
    const out = spawnSync('ps', ['-o', `${field}=`, '-p', String(pid)], { encoding: 'utf8' });
    return out.status === 0 ? out.stdout.trim() : undefined;
  };
  const parent = process.ppid;
  const command = ask(parent, 'comm');
  if (command === undefined) return undefined;
  if (!/^-?(sh|bash|dash|zsh|ksh|mksh|ash|busybox)$/.test(path.basename(command))) return parent;
  const grandparent = Number(ask(parent, 'ppid'));
  return grandparent > 1 ? grandparent : undefined;
}

function prepack() {
  restore();
  const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
  const text = readFileSync(manifestFile, 'utf8');
  const packed = `${JSON.stringify(packedManifest(JSON.parse(text)), null, 2)}\n`;
  copyFileSync(manifestFile, `${kept}.tmp`);
  renameSync(`${kept}.tmp`, kept);
  const npm = npmPid();
  if (npm !== undefined) {
    spawn(process.execPath, [import.meta.filename, 'restore-after', String(npm)], { detached: true, stdio: 'ignore' }).unref();
  }
  writeFileSync(`${manifestFile}.tmp`, packed);
  renameSync(`${manifestFile}.tmp`, manifestFile);
}

/** The watcher prepack leaves behind: restores once `pid` has exited, or ends once postpack has restored. */
function restoreAfter(pid) {
  const timer = setInterval(() => {
    if (!existsSync(kept)) return clearInterval(timer);
    try {
      process.kill(pid, 0);
    } catch (err) {
      if (err.code !== 'ESRCH') return;
      clearInterval(timer);
      restore();
    }
  }, 100);
}

if (import.meta.filename === path.resolve(process.argv[1] ?? '')) {
  const [what, arg] = process.argv.slice(2);
  if (what === 'prepack') prepack();
  else if (what === 'postpack') restore();
  else if (what === 'restore-after') restoreAfter(Number(arg));
  else {
    process.stderr.write('usage: node scripts/pack-manifest.mjs prepack|postpack\n');
    process.exit(2);
  }
}
