import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// A training run's `name`, `model` and `dataset` are one-line fields like
// every other: C0 controls (ESC, NUL, line breaks), DEL, C1 controls and bidi
// overrides are 422 `string_pattern_mismatch` at their loc, and nothing is
// stored. Free-form `params` values are data and stay as sent.

const REFUSED: [string, string][] = [
  ['ESC (C0)', '\u001b[31m'],
  ['NUL (C0)', '\u0000'],
  ['a line break', 'one\ntwo'],
  ['DEL', '\u007f'],
  ['C1 CSI', '\u009b31m'],
  ['RLO', '\u202e'],
  ['PDI', '\u2069'],
];

test('POST /training/start refuses control characters and bidi overrides in name, model and dataset with 422', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir, 'alice');
  const server = await startServer(t, dir);
  for (const field of ['name', 'model', 'dataset']) {
    for (const [what, chars] of REFUSED) {
      const r = await server.request('POST', '/training/start', { headers: { 'X-API-Key': key }, body: { [field]: `a${chars}b` } });
      assert.equal(r.status, 422, `${field} ${what}: ${r.text}`);
      assert.deepEqual(
        r.json.detail.map((d: { loc: unknown; type: string }) => [d.loc, d.type]),
        [[['body', field], 'string_pattern_mismatch']],
        `${field} ${what}`,
      );
    }
  }
  assert.deepEqual((await server.get('/training/runs', { 'X-API-Key': key })).json, [], 'nothing stored');
  const ok = await server.request('POST', '/training/start', {
    headers: { 'X-API-Key': key },
    body: { name: 'nuit — 夜 «ok»', model: 'small-7b', dataset: 's3://bucket/set', params: { note: 'tab\there\nnewline' } },
  });
  assert.equal(ok.status, 201, ok.text);
  assert.deepEqual(ok.json.params, { note: 'tab\there\nnewline' });
});

test('`estate training start` refuses the same with exit 2 naming the option', async (t) => {
  const dir = await tempDataDir(t);
  const r = await runEstate(['training', 'start', '--user', 'alice', '--name', 'evil\u001b]0;title\u0007', '--data-dir', dir]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^estate: invalid --name: String should be one line of text, without control characters[^\n]*\n$/);
  const list = await runEstate(['training', 'list', '--user', 'alice', '--json', '--data-dir', dir]);
  assert.deepEqual(list.json, []);
});
