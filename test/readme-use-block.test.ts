import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type TestContext, test } from 'node:test';
import { BIN } from './helpers/cli.ts';
import { ROOT } from './helpers/data-dir.ts';
import { waitUntil } from './helpers/wait-until.ts';

// The first commands a new user types are the README's "Use" block and the
// Examples of `estate --help`. Each runs here as written, line by line, in
// order, through bash on a machine as fresh as a test can make one: a new
// HOME, no XDG_* or ESTATE_* variables, and the built bin/estate on PATH as
// `estate`. Two things differ from a terminal, both said in the README: a
// line ending in `&` (the server) runs in the background until the test
// stops it, and its port is one the system picks (`--port 0`), put in place
// of the README's port in the lines after it, since the README's port may be
// taken on the machine that runs the tests.

interface Shell {
  home: string;
  env: Record<string, string>;
  /** Variables the lines set (`KEY=$(…)`), given to the lines after them. */
  vars: Record<string, string>;
  /** The server a `… &` line started, once it printed its URL. */
  server?: { child: ChildProcess; url: string; port: string; stdout: () => string; exited: Promise<number | null> };
}

async function freshShell(t: TestContext): Promise<Shell> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'estate-fresh-home-'));
  const bin = path.join(home, '.test-bin');
  await mkdir(bin);
  await symlink(BIN, path.join(bin, 'estate'));
  const shell: Shell = {
    home,
    // Nothing of the runner's environment but a PATH to node, bash and the coreutils.
    env: { HOME: home, PATH: [bin, path.dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'), LANG: 'C.UTF-8' },
    vars: {},
  };
  t.after(async () => {
    const child = shell.server?.child;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await rm(home, { recursive: true, force: true });
  });
  return shell;
}

function bash(shell: Shell, script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd: shell.home, env: { ...shell.env, ...shell.vars }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    // A line that never ends (a server without `&`) fails the test instead of holding it.
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A line without its trailing `# comment`. */
function command(line: string): string {
  return line.replace(/\s+#\s.*$/, '').trim();
}

/**
 * Runs one line as a user would in a shell where the lines before it ran:
 * `NAME=$(…)` keeps NAME for the lines after it; `… &` starts a server and
 * waits for its URL line. Every line must exit 0.
 */
async function runLine(shell: Shell, line: string): Promise<void> {
  let cmd = command(line);
  if (shell.server) cmd = cmd.replaceAll(`http://127.0.0.1:${shell.server.port}`, shell.server.url);
  const background = /^(.*?)\s*&$/.exec(cmd);
  if (background) {
    const port = /--port (\d+)/.exec(background[1] as string)?.[1];
    assert.ok(port, `${line}: a server line names its port, which the lines after it use`);
    assert.equal(shell.server, undefined, 'one server at a time');
    const child = spawn('bash', ['-c', `exec ${(background[1] as string).replace(`--port ${port}`, '--port 0')}`], {
      cwd: shell.home,
      env: { ...shell.env, ...shell.vars },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    await waitUntil(
      `"${line}" prints its URL`,
      () => {
        if (child.exitCode !== null) throw new Error(`"${line}" exited ${child.exitCode}: ${stderr}`);
        return /http:\/\/127\.0\.0\.1:\d+/.test(stdout);
      },
      30_000,
    );
    const url = (/http:\/\/127\.0\.0\.1:\d+/.exec(stdout) as RegExpExecArray)[0];
    shell.server = { child, url, port, stdout: () => stdout, exited };
    return;
  }
  const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=(\$\(.*\))$/.exec(cmd);
  const script = assignment ? `${cmd}\nrc=$?\nprintf '%s' "$${assignment[1]}"\nexit $rc` : cmd;
  const r = await bash(shell, script);
  assert.equal(r.code, 0, `"${line}" exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  if (assignment) {
    assert.notEqual(r.stdout, '', `"${line}" set ${assignment[1]} to something`);
    shell.vars[assignment[1] as string] = r.stdout;
  }
}

/** The lines of the README's "Use" block: the first sh block under `## Use`. */
async function readmeUseBlock(): Promise<string[]> {
  const readme = await readFile(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('\n## Use\n'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(block, 'the README has a "Use" section with a sh block');
  return block.split('\n').filter((l) => l.trim() !== '');
}

/** The `  $ …` lines under `Examples:` of a help text. */
function examplesOf(help: string): string[] {
  const at = help.indexOf('\nExamples:\n');
  assert.notEqual(at, -1, `no Examples: in\n${help}`);
  return [...help.slice(at).matchAll(/^ {2}\$ (.+)$/gm)].map((m) => m[1] as string);
}

/** A protected route answers `key` (200), and refuses a request without it (403): the key is one the server accepts. */
async function assertKeyAccepted(url: string, key: string | undefined): Promise<void> {
  assert.match(key ?? '', /^est_/, 'KEY holds an API key');
  const withKey = await fetch(`${url}/trends?limit=1`, { headers: { 'X-API-Key': key as string } });
  assert.equal(withKey.status, 200, await withKey.text());
  const without = await fetch(`${url}/trends?limit=1`);
  assert.equal(without.status, 403);
  await without.text();
}

async function stopServer(shell: Shell): Promise<void> {
  const server = shell.server;
  assert.ok(server, 'a line started the server');
  server.child.kill('SIGTERM');
  assert.equal(await server.exited, 0, 'the server stops cleanly on SIGTERM');
}

test("the README's Use block runs as written, line by line, on a fresh machine", async (t) => {
  const lines = await readmeUseBlock();
  assert.ok(lines.length >= 5, lines.join('\n'));
  const shell = await freshShell(t);
  for (const line of lines) await runLine(shell, line);
  assert.ok(shell.server, 'the block starts a server');
  assert.ok(existsSync(path.join(shell.home, '.local', 'share', 'estate')), 'estate init made the default data dir');
  await assertKeyAccepted(shell.server.url, shell.vars.KEY);
  // The key was made before the server started: it has nothing to hint at.
  assert.doesNotMatch(shell.server.stdout(), /no API key/);
  await stopServer(shell);
});

test("estate --help's examples run as written, in order, on a fresh machine, then those of init and keys create", async (t) => {
  const shell = await freshShell(t);
  const help = await bash(shell, 'estate --help');
  assert.equal(help.code, 0, help.stderr);
  const examples = examplesOf(help.stdout);
  assert.ok(examples.some((e) => e.startsWith('KEY=$(estate keys create')), examples.join('\n'));
  for (const line of examples) await runLine(shell, line);
  assert.ok(shell.server, 'an example starts a server');
  await assertKeyAccepted(shell.server.url, shell.vars.KEY);
  await stopServer(shell);

  // Each command's own examples that a fresh machine can run, once the data dir exists.
  for (const name of ['init', 'keys create']) {
    const r = await bash(shell, `estate ${name} --help`);
    assert.equal(r.code, 0, r.stderr);
    for (const line of examplesOf(r.stdout)) await runLine(shell, line);
  }
});
