import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate, startEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';

// The node's name (DESIGN.md 7a): `node_name` in the config, else the host
// name, wherever an answer names the node: the server's routes and the CLI's
// local answers alike.

/** The node each answer names, from the real server and the real CLI over `dir`. */
async function nodeNames(t: Parameters<typeof tempDataDir>[0], dir: string): Promise<Record<string, unknown>> {
  const made = await runEstate(['keys', 'create', '--user', 'alice', '--data-dir', dir]);
  assert.equal(made.code, 0, made.stderr);
  const headers = { 'X-API-Key': made.stdout.trim() };
  const served = startEstate(t, ['serve', '--port', '0', '--data-dir', dir]);
  await served.waitForStdout('the URL line', (s) => /http:\/\/127\.0\.0\.1:\d+\n/.test(s));
  const url = (/http:\/\/127\.0\.0\.1:\d+/.exec(served.stdout()) as RegExpExecArray)[0];
  const get = async (route: string) => {
    const r = await fetch(`${url}${route}`, { headers });
    assert.equal(r.status, 200, route);
    return (await r.json()) as Record<string, any>;
  };
  const local = async (...args: string[]) => {
    const r = await runEstate([...args, '--json', '--data-dir', dir]);
    assert.equal(r.code, 0, r.stderr);
    return r.json as Record<string, any>;
  };
  const names = {
    '/': (await get('/')).node,
    '/health': (await get('/health')).node,
    '/estate/status': (await get('/estate/status')).node,
    '/summary': (await get('/summary')).node,
    '/api/garden': (await get('/api/garden')).identity.node,
    'estate info': (await local('info')).node,
    'estate health': (await local('health')).node,
    'estate status': (await local('status')).node,
    'estate summary': (await local('summary')).node,
    'estate garden': (await local('garden')).identity.node,
  };
  assert.equal((await served.stop()).code, 0);
  return names;
}

test('without node_name in the config, every answer names the node by its host name', async (t) => {
  const dir = await tempDataDir(t);
  const names = await nodeNames(t, dir);
  assert.notEqual(os.hostname(), 'estate', 'a host named estate would prove nothing');
  for (const [where, node] of Object.entries(names)) assert.equal(node, os.hostname(), where);
});

test('node_name in the config names the node everywhere', async (t) => {
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ node_name: 'hub' }));
  const names = await nodeNames(t, dir);
  for (const [where, node] of Object.entries(names)) assert.equal(node, 'hub', where);
});
