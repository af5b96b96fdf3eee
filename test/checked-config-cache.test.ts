import assert from 'node:assert/strict';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';

// The built CLI keeps what it made of a config text in the user's cache
// (src/checked-config-cache.ts). These runs give it a cache folder of its
// own (XDG_CACHE_HOME) and look at what it writes and what it believes.

async function setup(t: test.TestContext) {
  const dir = await tempDataDir(t);
  const cacheHome = await mkdtemp(path.join(os.tmpdir(), 'estate-cache-'));
  t.after(() => rm(cacheHome, { recursive: true, force: true }));
  const env = { XDG_CACHE_HOME: cacheHome };
  const cacheFile = path.join(cacheHome, 'estate', 'checked-config.json');
  const configFile = path.join(dir, 'estate.config.json');
  const nodeOf = async () => {
    const r = await runEstate(['info', '--json', '--data-dir', dir], { env });
    assert.equal(r.code, 0, r.stderr);
    return r.json.node as string;
  };
  return { dir, env, cacheFile, configFile, nodeOf };
}

test('a checked config is kept in the user cache, private, and a changed text is checked again', async (t) => {
  const { dir, env, cacheFile, configFile, nodeOf } = await setup(t);
  const text = JSON.stringify({ node_name: 'first' });
  await writeFile(configFile, text);
  assert.equal(await nodeOf(), 'first');
  const cache = JSON.parse(await readFile(cacheFile, 'utf8'));
  assert.match(cache[0].stamp, /^[0-9a-f-]{36}$/, 'keyed to the build that checked it');
  assert.equal(cache[0].text, text);
  assert.equal(cache[0].config.node_name, 'first');
  assert.equal((await stat(cacheFile)).mode & 0o777, 0o600);
  assert.equal((await stat(path.dirname(cacheFile))).mode & 0o777, 0o700);

  assert.equal(await nodeOf(), 'first');
  await writeFile(configFile, JSON.stringify({ node_name: 'second' }));
  assert.equal(await nodeOf(), 'second');
  // A text once valid and now invalid is refused: only what was checked is kept.
  await writeFile(configFile, JSON.stringify({ node_name: '' }));
  const bad = await runEstate(['info', '--json', '--data-dir', dir], { env });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /node_name: /);
  const kept = JSON.parse(await readFile(cacheFile, 'utf8'));
  assert.deepEqual(kept.map((e: { config: { node_name: string } }) => e.config.node_name), ['second', 'first']);
});

test('the cache is believed only for its own bundle, and only when nobody else may write it', async (t) => {
  const { cacheFile, configFile, nodeOf } = await setup(t);
  const text = JSON.stringify({ node_name: 'on-disk' });
  await writeFile(configFile, text);
  assert.equal(await nodeOf(), 'on-disk');
  const stamp: string = JSON.parse(await readFile(cacheFile, 'utf8'))[0].stamp;
  // An entry claiming another meaning for the same text: taken when it is this build's own, private cache…
  const planted = (stamp: string) => JSON.stringify([{ stamp, text, config: { node_name: 'from-cache', providers: [], providers_cache_s: 60, events: { stale_after_s: 900 }, training: { max_runs_per_user: 1000, max_params_bytes: 10240 } } }]);
  await writeFile(cacheFile, planted(stamp));
  assert.equal(await nodeOf(), 'from-cache');
  // …not when another build wrote it (the config is checked again, and kept beside the other bundle's)…
  await writeFile(cacheFile, planted('1:2:3'));
  assert.equal(await nodeOf(), 'on-disk');
  assert.deepEqual(JSON.parse(await readFile(cacheFile, 'utf8')).map((e: { stamp: string }) => e.stamp), [stamp, '1:2:3']);
  // …nor when others may write it…
  await writeFile(cacheFile, planted(stamp));
  await chmod(cacheFile, 0o622);
  assert.equal(await nodeOf(), 'on-disk');
  // …and a cache that is not JSON is checked past, never an error.
  await writeFile(cacheFile, '[{"stamp": ', { mode: 0o600 });
  await chmod(cacheFile, 0o600);
  assert.equal(await nodeOf(), 'on-disk');
});

test('a cache folder that cannot be written leaves the command working', async (t) => {
  const { dir, configFile } = await setup(t);
  await writeFile(configFile, JSON.stringify({ node_name: 'no-cache' }));
  const blocker = path.join(dir, 'not-a-folder');
  await writeFile(blocker, '');
  const r = await runEstate(['info', '--json', '--data-dir', dir], { env: { XDG_CACHE_HOME: blocker } });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.json.node, 'no-cache');
  assert.equal(r.stderr, '');
});
