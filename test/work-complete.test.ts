import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tempDataDir } from './helpers/data-dir.ts';
import { completionBody, logLines } from './helpers/records.ts';
import { newKey, startServer } from './helpers/server.ts';

// POST /work/complete over real HTTP: the write contract of DESIGN.md section 4.

const LOG = 'work/completions.jsonl';
const REQUIRED = ['task_id', 'board', 'assignee', 'title'];

async function setup(t: Parameters<typeof tempDataDir>[0]) {
  const dir = await tempDataDir(t);
  const key = await newKey(dir, 'cron');
  const server = await startServer(t, dir);
  const post = (body: unknown, headers: Record<string, string> = { 'X-API-Key': key }) => server.request('POST', '/work/complete', { body: body as object, headers });
  return { dir, key, server, post };
}

test('a new completion is 201 with the stored record; the service adds id and completed_at', async (t) => {
  const { dir, post } = await setup(t);
  const body = completionBody(1, { commit_sha: 'e83239bc6afe3b0794ac73990dbda12f0bd1eede', output_url: 'https://git.example.org/x', summary: 'Done.\nTwo lines.' });
  const r = await post(body);
  assert.equal(r.status, 201);
  assert.match(r.json.id, /^wc_[0-9a-f]{16}$/);
  assert.ok(Math.abs(Date.parse(r.json.completed_at) - Date.now()) < 60_000);
  assert.match(r.json.completed_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const { id, completed_at, ...rest } = r.json;
  assert.deepEqual(rest, body);
  assert.deepEqual(await logLines(dir, LOG), [JSON.stringify(r.json)]);
});

test('the same (board, task_id) with the same fields is a safe replay: 200, nothing written', async (t) => {
  const { dir, post } = await setup(t);
  const first = await post(completionBody(1, { summary: 's' }));
  const cases: [string, Record<string, unknown>][] = [
    ['identical', completionBody(1, { summary: 's' })],
    ['fields in another order', { summary: 's', title: 'Task 1', assignee: 'builder', board: 'ops', task_id: 'T-1' }],
    ['an absent optional sent as null', completionBody(1, { summary: 's', commit_sha: null, output_url: null })],
  ];
  for (const [name, body] of cases) {
    await t.test(name, async () => {
      const again = await post(body);
      assert.equal(again.status, 200);
      assert.deepEqual(again.json, first.json);
    });
  }
  assert.equal((await logLines(dir, LOG)).length, 1);
});

test('the same (board, task_id) with other fields is 409 and writes nothing', async (t) => {
  const { dir, post } = await setup(t);
  await post(completionBody(1, { summary: 's' }));
  const cases: [string, Record<string, unknown>][] = [
    ['another title', completionBody(1, { summary: 's', title: 'Other' })],
    ['an optional field added', completionBody(1, { summary: 's', commit_sha: 'abcdef1' })],
    ['an optional field left out', completionBody(1)],
  ];
  for (const [name, body] of cases) {
    await t.test(name, async () => {
      const r = await post(body);
      assert.equal(r.status, 409);
      assert.equal(typeof r.json.detail, 'string');
      assert.match(r.json.detail, /ops\/T-1/);
    });
  }
  // Another board is another task.
  assert.equal((await post(completionBody(1, { board: 'garden' }))).status, 201);
  assert.equal((await logLines(dir, LOG)).length, 2);
});

test('each required field missing in turn is 422 at ["body", field], type missing', async (t) => {
  const { post } = await setup(t);
  for (const field of REQUIRED) {
    await t.test(field, async () => {
      const body = completionBody(1);
      delete body[field];
      const r = await post(body);
      assert.equal(r.status, 422);
      assert.deepEqual(r.json.detail, [{ loc: ['body', field], msg: 'Field required', type: 'missing' }]);
    });
  }
});

test('bad field values are 422 with the field and a pydantic type', async (t) => {
  const { dir, post } = await setup(t);
  const cases: [string, Record<string, unknown>, string, string][] = [
    ['board not a slug', { board: 'Ops Board' }, 'board', 'string_pattern_mismatch'],
    ['board with a trailing hyphen', { board: 'ops-' }, 'board', 'string_pattern_mismatch'],
    ['board too long', { board: 'a'.repeat(65) }, 'board', 'string_too_long'],
    ['board not a string', { board: 7 }, 'board', 'string_type'],
    ['empty title', { title: '' }, 'title', 'string_too_short'],
    ['title of 301 characters', { title: 't'.repeat(301) }, 'title', 'string_too_long'],
    ['title with a newline', { title: 'a\nb' }, 'title', 'string_pattern_mismatch'],
    ['task_id of 129 characters', { task_id: 'x'.repeat(129) }, 'task_id', 'string_too_long'],
    ['assignee with an escape sequence', { assignee: 'bot\u001b[31m' }, 'assignee', 'string_pattern_mismatch'],
    ['commit_sha not hex', { commit_sha: 'zzzzzzz' }, 'commit_sha', 'string_pattern_mismatch'],
    ['commit_sha of 6 digits', { commit_sha: 'abcdef' }, 'commit_sha', 'string_pattern_mismatch'],
    ['commit_sha of 41 digits', { commit_sha: 'a'.repeat(41) }, 'commit_sha', 'string_pattern_mismatch'],
    ['output_url ftp', { output_url: 'ftp://example.org/x' }, 'output_url', 'url_parsing'],
    ['output_url javascript:', { output_url: 'javascript:alert(1)' }, 'output_url', 'url_parsing'],
    ['output_url relative', { output_url: '/x' }, 'output_url', 'url_parsing'],
    ['output_url too long', { output_url: `https://example.org/${'a'.repeat(2048)}` }, 'output_url', 'string_too_long'],
    ['summary of 2001 characters', { summary: 's'.repeat(2001) }, 'summary', 'string_too_long'],
    ['an unknown field', { completed_at: '2026-01-01T00:00:00Z' }, 'completed_at', 'extra_forbidden'],
    ['id cannot be chosen', { id: 'wc_0000000000000000' }, 'id', 'extra_forbidden'],
  ];
  for (const [name, overrides, field, type] of cases) {
    await t.test(name, async () => {
      const r = await post(completionBody(1, overrides));
      assert.equal(r.status, 422);
      assert.deepEqual(r.json.detail.map((d: { loc: unknown }) => d.loc), [['body', field]]);
      assert.equal(r.json.detail[0].type, type);
      assert.equal(typeof r.json.detail[0].msg, 'string');
    });
  }
  // Valid edge values pass.
  for (const [name, overrides] of [
    ['commit_sha in capitals', { commit_sha: 'ABCDEF1' }],
    ['commit_sha of 40 digits', { commit_sha: 'a'.repeat(40) }],
    ['an http URL', { output_url: 'http://hub.local:8080/x?y=1' }],
    ['unicode in the title', { title: 'Élagage — 剪定' }],
  ] as const) {
    await t.test(`accepted: ${name}`, async () => {
      const r = await post(completionBody(name, overrides));
      assert.equal(r.status, 201, JSON.stringify(r.json));
    });
  }
  assert.equal((await logLines(dir, LOG)).length, 4);
});

test('a body that is not a JSON object is 422; over 1 MiB is 413', async (t) => {
  const { server, key, dir } = await setup(t);
  const cases: [string, string, number, string][] = [
    ['malformed JSON', '{"task_id": "T-1",', 422, 'json_invalid'],
    ['an array', '[]', 422, 'dict_type'],
    ['no body', '', 422, 'missing'],
  ];
  for (const [name, body, status, type] of cases) {
    await t.test(name, async () => {
      const r = await server.request('POST', '/work/complete', { body, headers: { 'X-API-Key': key } });
      assert.equal(r.status, status);
      assert.equal(r.json.detail[0].type, type);
      assert.deepEqual(r.json.detail[0].loc, ['body']);
    });
  }
  await t.test('a body over 1 MiB', async () => {
    const r = await server.request('POST', '/work/complete', { body: completionBody(1, { summary: 'x'.repeat(1024 * 1024) }), headers: { 'X-API-Key': key } });
    assert.equal(r.status, 413);
    assert.equal(typeof r.json.detail, 'string');
  });
  assert.deepEqual(await logLines(dir, LOG), []);
});

test('no credential or an invalid one is 403, before the body is looked at', async (t) => {
  const { post, dir } = await setup(t);
  const cases: [string, Record<string, string>, unknown][] = [
    ['no credential', {}, completionBody(1)],
    ['no credential, bad body', {}, '{not json'],
    ['an unknown key', { 'X-API-Key': 'est_nope_nope' }, completionBody(1)],
    ['an empty bearer', { Authorization: 'Bearer ' }, completionBody(1)],
  ];
  for (const [name, headers, body] of cases) {
    await t.test(name, async () => {
      const r = await post(body, headers);
      assert.equal(r.status, 403);
      assert.equal(typeof r.json.detail, 'string');
    });
  }
  assert.deepEqual(await logLines(dir, LOG), []);
});

test('ESTATE_API_KEY and a bearer key are accepted credentials', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir, 'cron');
  const server = await startServer(t, dir, { envApiKey: 'env-secret-123' });
  const a = await server.request('POST', '/work/complete', { body: completionBody(1), headers: { 'X-API-Key': 'env-secret-123' } });
  const b = await server.request('POST', '/work/complete', { body: completionBody(2), headers: { Authorization: `Bearer ${key}` } });
  assert.deepEqual([a.status, b.status], [201, 201]);
});
