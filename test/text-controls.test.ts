import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { completionBody, entryBody, logLines } from './helpers/records.ts';
import { newKey, startServer } from './helpers/server.ts';

// Text printed on one line (tables, logs, terminals) refuses what a terminal
// would act on or reorder: C0 and DEL, C1 (U+0080–U+009F: CSI is U+009B,
// OSC U+009D) and the bidi overrides and isolates (U+202A–U+202E,
// U+2066–U+2069): 422 `string_pattern_mismatch`, as C0 always was. Summaries
// (multi-line) refuse the same, line breaks and tabs aside.

const REFUSED: [string, string][] = [
  ['C1 CSI', '\u009b31m'],
  ['C1 OSC', '\u009d0;title\u009c'],
  ['C1 first', '\u0080'],
  ['C1 last', '\u009f'],
  ['DEL', '\u007f'],
  ['LRE', '\u202a'],
  ['RLO', '\u202e'],
  ['LRI', '\u2066'],
  ['PDI', '\u2069'],
];

test('POST /work/complete and /publishing/register refuse C1 controls and bidi overrides in text fields with 422', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const routes: [string, (i: number | string, o: Record<string, unknown>) => Record<string, unknown>, string[], string][] = [
    ['/work/complete', completionBody, ['task_id', 'assignee', 'title', 'summary'], 'work/completions.jsonl'],
    ['/publishing/register', entryBody, ['title', 'summary'], 'publishing/entries.jsonl'],
  ];
  let n = 0;
  for (const [route, body, fields, log] of routes) {
    for (const field of fields) {
      for (const [name, chars] of REFUSED) {
        const r = await server.request('POST', route, { headers: { 'X-API-Key': key }, body: body(++n, { [field]: `a${chars}b` }) });
        assert.equal(r.status, 422, `${route} ${field} ${name}: ${r.text}`);
        assert.deepEqual(r.json.detail.map((d: { loc: unknown; type: string }) => [d.loc, d.type]), [[['body', field], 'string_pattern_mismatch']]);
        assert.match(r.json.detail[0].msg, /^String should be (one line of )?text,? without control characters/);
      }
    }
    assert.deepEqual(await logLines(dir, log), [], `nothing stored in ${log}`);
    // What stays allowed: text in any script, punctuation near the refused ranges, line breaks in a summary.
    const ok = await server.request('POST', route, {
      headers: { 'X-API-Key': key },
      body: body('ok', { title: 'Élagage — 剪定 \u00a0«ok» \u200f\u2070', summary: 'line one\nline two\tend' }),
    });
    assert.equal(ok.status, 201, ok.text);
  }
});

test('the CLI refuses the same: work complete exits 2 naming the field, keys create refuses such a name', async (t) => {
  const dir = await tempDataDir(t);
  const r = await runEstate(['work', 'complete', '--task-id', 'T-1', '--board', 'ops', '--assignee', 'cron', '--title', 'evil\u202egnp.exe', '--data-dir', dir]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^estate: invalid --title: String should be one line of text, without control characters[^\n]*\n$/);
  const k = await runEstate(['keys', 'create', '--user', 'alice', '--name', 'lap\u009btop', '--data-dir', dir]);
  assert.equal(k.code, 2, k.stderr);
  assert.equal(k.stderr, 'estate: invalid name: at most 100 characters, no control characters or bidi overrides\n');
});

// URLs are printed on one line too (feeds, tables, HTML pages): the same
// characters are refused wherever they stand, C0 included, never stripped or
// trimmed away into a different URL (the WHATWG parser drops tabs and line
// breaks and would percent-encode the rest).
const URL_REFUSED: [string, string][] = [
  ['NUL', '\u0000'],
  ['ESC CSI', '\u001b[31m'],
  ['tab', '\t'],
  ['line feed', '\n'],
  ['carriage return', '\r'],
  ...REFUSED,
];

test('POST /work/complete output_url and /publishing/register url refuse control characters and bidi overrides with 422', async (t) => {
  const dir = await tempDataDir(t);
  const key = await newKey(dir);
  const server = await startServer(t, dir);
  const routes: [string, (i: number | string, o: Record<string, unknown>) => Record<string, unknown>, string, string][] = [
    ['/work/complete', completionBody, 'output_url', 'work/completions.jsonl'],
    ['/publishing/register', entryBody, 'url', 'publishing/entries.jsonl'],
  ];
  let n = 0;
  for (const [route, body, field, log] of routes) {
    for (const [name, chars] of URL_REFUSED) {
      for (const [where, url] of [
        ['path', `https://example.org/a${chars}b`],
        ['query', `https://example.org/?q=${chars}`],
        ['host', `https://exa${chars}mple.org/`],
        ['end', `https://example.org/x${chars}`],
      ]) {
        const r = await server.request('POST', route, { headers: { 'X-API-Key': key }, body: body(++n, { [field]: url }) });
        assert.equal(r.status, 422, `${route} ${field} ${name} in the ${where}: ${r.text}`);
        assert.deepEqual(r.json.detail.map((d: { loc: unknown; type: string }) => [d.loc, d.type]), [[['body', field], 'string_pattern_mismatch']], `${name} in the ${where}`);
        assert.equal(r.json.detail[0].msg, 'String should be one line of text, without control characters or bidirectional overrides');
      }
    }
    assert.deepEqual(await logLines(dir, log), [], `nothing stored in ${log}`);
    // What stays allowed, stored exactly as sent: non-ASCII text and characters next to the refused ranges.
    const url = 'https://example.org/Élagage/剪定?q=«ok»\u00a0\u200f#end';
    const ok = await server.request('POST', route, { headers: { 'X-API-Key': key }, body: body('ok', { [field]: url }) });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(JSON.parse((await logLines(dir, log))[0] ?? '{}')[field], url);
  }
});

test('the CLI refuses a control character in work complete --output-url with exit 2', async (t) => {
  const dir = await tempDataDir(t);
  const r = await runEstate(['work', 'complete', '--task-id', 'T-1', '--board', 'ops', '--assignee', 'cron', '--title', 't', '--output-url', 'https://example.org/\u009b31m', '--data-dir', dir]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^estate: invalid --output-url: String should be one line of text, without control characters[^\n]*\n$/);
  assert.deepEqual(await logLines(dir, 'work/completions.jsonl'), []);
});
