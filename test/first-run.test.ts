import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate, startEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';

// What a new user meets before the first key: `estate init` with and without
// a DIR, the error of a data dir that is not there, and `estate serve` on a
// data dir with no key yet. HOME is a fresh folder, so the default data dir
// is HOME/.local/share/estate.

const URL_LINE = /at (http:\/\/127\.0\.0\.1:\d+)\n/;

test('estate init with no DIR makes the data dir commands use by default, and says what to run next', async (t) => {
  const home = await tempDataDir(t);
  const env = { HOME: home };
  const dir = path.join(home, '.local', 'share', 'estate');
  const init = await runEstate(['init'], { env });
  assert.equal(init.code, 0, init.stderr);
  assert.equal(init.stdout, `estate data dir ready at ${dir}\nnext: estate keys create --user NAME (an API key), then estate serve\n`);
  assert.ok(existsSync(path.join(dir, 'work')));
  // The next command finds it with no --data-dir.
  const key = await runEstate(['keys', 'create', '--user', 'alice'], { env });
  assert.equal(key.code, 0, key.stderr);
  assert.match(key.stdout, /^est_/);
});

test('estate init DIR, not the default, says how commands use it: --data-dir DIR or ESTATE_DATA_DIR', async (t) => {
  const home = await tempDataDir(t);
  const env = { HOME: home };
  const dir = path.join(home, 'my estate');
  const init = await runEstate(['init', dir], { env });
  assert.equal(init.code, 0, init.stderr);
  assert.equal(
    init.stdout,
    [
      `estate data dir ready at ${dir}`,
      `commands use ${path.join(home, '.local', 'share', 'estate')} when none is named: they use this one when given --data-dir '${dir}', or with ESTATE_DATA_DIR='${dir}' exported`,
      `next: estate keys create --user NAME --data-dir '${dir}' (an API key), then estate serve --data-dir '${dir}'`,
      '',
    ].join('\n'),
  );
  // Both ways it names work.
  assert.equal((await runEstate(['keys', 'list', '--data-dir', dir], { env })).code, 0);
  assert.equal((await runEstate(['keys', 'list'], { env: { ...env, ESTATE_DATA_DIR: dir } })).code, 0);
  // With ESTATE_DATA_DIR naming it, it is where commands look: nothing more to say.
  const again = await runEstate(['init', dir], { env: { ...env, ESTATE_DATA_DIR: dir } });
  assert.equal(again.stdout, `estate data dir ready at ${dir}\nnext: estate keys create --user NAME (an API key), then estate serve\n`);
});

test('a missing data dir says how to create that one: estate init when it is the default, estate init DIR when --data-dir named it', async (t) => {
  const home = await tempDataDir(t);
  const fallback = await runEstate(['keys', 'create', '--user', 'alice'], { env: { HOME: home } });
  assert.equal(fallback.code, 2);
  assert.equal(
    fallback.stderr,
    `estate: data directory ${path.join(home, '.local', 'share', 'estate')} does not exist (create it with: estate init, or name another with --data-dir DIR)\n`,
  );
  const named = path.join(home, 'lab');
  const flagged = await runEstate(['trends', '--data-dir', named], { env: { HOME: home } });
  assert.equal(flagged.code, 2);
  assert.equal(flagged.stderr, `estate: data directory ${named} does not exist (create it with: estate init ${named})\n`);
});

test('estate serve on a data dir with no key says how to make one, naming the data dir unless it is the default', async (t) => {
  const home = await tempDataDir(t);
  const env = { HOME: home };
  assert.equal((await runEstate(['init'], { env })).code, 0);
  const served = startEstate(t, ['serve', '--port', '0'], { env });
  await served.waitForStdout('the hint', (s) => s.includes('no API key'));
  const url = URL_LINE.exec(served.stdout())?.[1];
  assert.ok(url, served.stdout());
  assert.equal(served.stdout().split('\n')[1], 'no API key yet: protected routes answer 403 until one exists; create one with: estate keys create --user NAME');
  // The hint is true: refused now, and the command it names makes a key the running server accepts.
  assert.equal((await fetch(`${url}/trends`)).status, 403);
  const made = await runEstate(['keys', 'create', '--user', 'alice'], { env });
  assert.equal(made.code, 0, made.stderr);
  assert.equal((await fetch(`${url}/trends`, { headers: { 'X-API-Key': made.stdout.trim() } })).status, 200);
  assert.equal((await served.stop()).code, 0);

  // A data dir named with --data-dir: the command names it too.
  const other = await tempDataDir(t);
  const named = startEstate(t, ['serve', '--port', '0', '--data-dir', other], { env });
  await named.waitForStdout('the hint', (s) => s.includes('no API key'));
  assert.match(named.stdout(), new RegExp(`create one with: estate keys create --user NAME --data-dir ${other.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\n`));
  await named.stop();
});

test('estate serve says nothing of keys when the store has one, or ESTATE_API_KEY is set', async (t) => {
  const home = await tempDataDir(t);
  const env = { HOME: home };
  assert.equal((await runEstate(['init'], { env })).code, 0);
  const withEnvKey = startEstate(t, ['serve', '--port', '0'], { env: { ...env, ESTATE_API_KEY: 'a-key-from-the-environment' } });
  await withEnvKey.waitForStdout('the URL line', (s) => URL_LINE.test(s));
  const first = await withEnvKey.stop();
  assert.doesNotMatch(first.stdout, /API key/);

  assert.equal((await runEstate(['keys', 'create', '--user', 'alice'], { env })).code, 0);
  const withKey = startEstate(t, ['serve', '--port', '0'], { env });
  await withKey.waitForStdout('the URL line', (s) => URL_LINE.test(s));
  const second = await withKey.stop();
  assert.match(second.stdout, /^estate serving .* at http:\/\/127\.0\.0\.1:\d+\n$/, 'only the URL line');
});
