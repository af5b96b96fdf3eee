import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import { parseConfig, resolveStoreSpec } from '../src/config.ts';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';

// Which store a command uses: --store, else ESTATE_STORE, else the config's
// `store`, else the data dir. A password in the config file is refused.

/** A PostgreSQL URL nothing listens on: a command that really used it would fail. */
const NOWHERE = 'postgres://estate@127.0.0.1:1/estate';

test('the store spec: flag over environment over config over the data dir', () => {
  const config = parseConfig(JSON.stringify({ store: 'postgres://estate@db.internal/estate' }), 'estate.config.json');
  assert.equal(resolveStoreSpec('postgres://flag@a/b', config, { ESTATE_STORE: 'postgres://env@a/b' }), 'postgres://flag@a/b');
  assert.equal(resolveStoreSpec(undefined, config, { ESTATE_STORE: 'postgres://env@a/b' }), 'postgres://env@a/b');
  assert.equal(resolveStoreSpec(undefined, config, {}), 'postgres://estate@db.internal/estate');
  assert.equal(resolveStoreSpec(undefined, parseConfig('{}', 'estate.config.json'), {}), undefined);
});

test('a password in the config file store URL is refused, naming where it may come from', async (t) => {
  for (const store of ['postgres://estate:hunter2@db.internal/estate', 'postgresql://estate@db.internal/estate?password=hunter2']) {
    await t.test(store.replace(/hunter2/, '***'), async (t) => {
      const dir = await tempDataDir(t);
      await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ store }));
      const result = await runEstate(['work', 'feed', '--data-dir', dir]);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /store: the URL must not hold a password: set PGPASSWORD or use a PGPASSFILE/);
      assert.doesNotMatch(result.stderr, /hunter2/);
    });
  }
  assert.throws(() => parseConfig(JSON.stringify({ store: 'mysql://db/estate' }), 'estate.config.json'), /store: use a postgres:\/\/ or postgresql:\/\/ URL, or data-dir/);
});

test('--store data-dir wins over ESTATE_STORE and the config; ESTATE_STORE wins over the config', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ store: NOWHERE }));
  const body = { task_id: 'EST-1', board: 'ops', assignee: 'ana', title: 'One' };
  const flag = await runEstate(['work', 'complete', ...fields(body), '--store', 'data-dir', '--data-dir', dir, '--json'], { env: { ESTATE_STORE: NOWHERE } });
  assert.equal(flag.code, 0, flag.stderr);
  const env = await runEstate(['work', 'feed', '--data-dir', dir, '--json'], { env: { ESTATE_STORE: 'data-dir' } });
  assert.equal(env.code, 0, env.stderr);
  assert.deepEqual(
    env.json.items.map((r: { task_id: string }) => r.task_id),
    ['EST-1'],
  );
  assert.ok(readdirSync(path.join(dir, 'work')).includes('completions.jsonl'), 'written to the data dir');
});

test('an unknown store is a usage error; keys and token commands take --store too', async (t) => {
  const dir = await tempDataDir(t);
  const bad = await runEstate(['work', 'feed', '--store', 'mysql://db/estate', '--data-dir', dir]);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /invalid store "mysql:\/\/db\/estate": use a postgres:\/\/ or postgresql:\/\/ URL, or data-dir/);
  for (const args of [['keys', 'list'], ['token', 'create', '--user', 'ana']]) {
    const ok = await runEstate([...args, '--store', 'data-dir', '--data-dir', dir]);
    assert.equal(ok.code, 0, ok.stderr);
  }
});

function fields(body: Record<string, string>): string[] {
  return Object.entries(body).flatMap(([k, v]) => [`--${k.replace(/_/g, '-')}`, v]);
}
