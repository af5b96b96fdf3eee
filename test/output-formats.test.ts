import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { runEstate } from './helpers/cli.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';

// Output for pipes and scripts, through the real CLI with stdout a pipe: TSV
// with a header line by default (no boxes, no footer), `-o csv` per RFC 4180,
// `-o yaml` the same data as `--json`, `--json FIELD,FIELD` the items with
// only those fields, `--no-headers`.

const BOX = /[─│┌┐└┘├┤┬┴┼]/;
const TREND_COLUMNS = ['ts', 'node', 'cpu_pct', 'mem_pct', 'load1', 'requests_per_min', 'p95_ms', 'queue_depth'];

/** RFC 4180 records (CRLF line ends, quoted fields with doubled quotes). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field), rows.push(row), (row = []), (field = ''), i++;
    } else field += c;
  }
  assert.equal(field + row.join(''), '', 'the last record ends with CRLF');
  return rows;
}

test('piped, a list is TSV: a header line and one line per item, no box drawing, no footer on stdout', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const r = await runEstate(['trends', '--limit', '3', '--data-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stdout, BOX);
  assert.doesNotMatch(r.stdout, /items|limit/, 'the footer is not data');
  const lines = r.stdout.split('\n');
  assert.equal(lines.pop(), '', 'ends with a newline');
  assert.equal(lines.length, 3 + 1, '`| wc -l` counts the items and the header');
  assert.deepEqual(lines[0]?.split('\t'), TREND_COLUMNS);
  const json = (await runEstate(['trends', '--limit', '3', '--json', '--data-dir', dir])).json;
  const expected = json.items.map((item: Record<string, unknown>) => TREND_COLUMNS.map((c) => String(item[c])));
  assert.deepEqual(lines.slice(1).map((l) => l.split('\t')), expected, 'exact values, absolute times');

  const bare = await runEstate(['trends', '--limit', '3', '--no-headers', '--data-dir', dir]);
  assert.equal(bare.stdout, `${lines.slice(1).join('\n')}\n`);
});

test('piped, an empty list prints nothing when its operation names no columns, and the header alone when it does', async (t) => {
  const dir = await tempDataDir(t);
  for (const format of [[], ['-o', 'csv']]) {
    const trends = await runEstate(['trends', '--limit', '20', ...format, '--data-dir', dir]);
    assert.equal(trends.code, 0, trends.stderr);
    assert.equal(trends.stdout, '', `trends ${format.join(' ')}`);
  }
  const events = await runEstate(['events', '--data-dir', dir]);
  assert.equal(events.stdout, 'ts\tkind\tsubject\tmessage\n');
});

test('piped, tabs, newlines, backslashes and controls in values are escaped, so a row stays one line', async (t) => {
  const dir = await tempDataDir(t);
  const node = 'a\tb\nc\\d\x1b[2J, "q"';
  await writeFile(path.join(dir, 'trends.jsonl'), `${JSON.stringify({ ts: '2026-11-08T00:05:00.000Z', node, cpu_pct: 1 })}\n`);
  const tsv = await runEstate(['trends', '--data-dir', dir]);
  assert.equal(tsv.code, 0, tsv.stderr);
  const lines = tsv.stdout.trimEnd().split('\n');
  assert.equal(lines.length, 2);
  assert.equal(lines[1]?.split('\t')[1], 'a\\tb\\nc\\\\d\\x1b[2J, "q"');

  const csv = await runEstate(['trends', '-o', 'csv', '--data-dir', dir]);
  assert.equal(csv.code, 0, csv.stderr);
  assert.match(csv.stdout, /,"a\\tb\\nc\\d\\x1b\[2J, ""q""",/, 'a field with a comma or a quote is quoted, quotes doubled');
  const rows = parseCsv(csv.stdout);
  assert.equal(rows.length, 2);
  assert.equal(rows[1]?.[1], 'a\\tb\\nc\\d\\x1b[2J, "q"');
});

test('-o csv parses back as RFC 4180 to the same values as --json', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const csv = await runEstate(['pulse', '--limit', '4', '-o', 'csv', '--data-dir', dir]);
  assert.equal(csv.code, 0, csv.stderr);
  const [head, ...rows] = parseCsv(csv.stdout);
  assert.deepEqual(head, ['ts', 'status', 'checks']);
  const json = (await runEstate(['pulse', '--limit', '4', '--json', '--data-dir', dir])).json;
  assert.equal(rows.length, json.items.length);
  rows.forEach((row, i) => {
    const item = json.items[i];
    assert.deepEqual([row[0], row[1], JSON.parse(row[2] as string)], [item.ts, item.status, item.checks], 'nested values are JSON');
  });
  const bare = await runEstate(['pulse', '--limit', '4', '-o', 'csv', '--no-headers', '--data-dir', dir]);
  assert.equal(parseCsv(bare.stdout).length, 4);
});

test('-o yaml parses back to the same data as --json, for lists, records and plain values', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  for (const args of [['trends', '--limit', '5'], ['pulse', '--limit', '3'], ['state', 'heartbeat'], ['pulse', 'status'], ['disk', '--limit', '3'], ['training', 'list', '--user', 'alice']]) {
    const yaml = await runEstate([...args, '-o', 'yaml', '--data-dir', dir]);
    const json = await runEstate([...args, '-o', 'json', '--data-dir', dir]);
    assert.equal(yaml.code, 0, `${args.join(' ')}: ${yaml.stderr}`);
    assert.notEqual(json.json, undefined, args.join(' '));
    assert.deepEqual(parseYaml(yaml.stdout), json.json, args.join(' '));
  }
});

test('--json FIELD,FIELD prints the items with only those fields, in that order, as gh does', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const full = (await runEstate(['trends', '--limit', '4', '--json', '--data-dir', dir])).json;
  const some = await runEstate(['trends', '--limit', '4', '--json', 'node,ts', '--data-dir', dir]);
  assert.equal(some.code, 0, some.stderr);
  assert.deepEqual(
    some.json,
    full.items.map((i: Record<string, unknown>) => ({ node: i.node, ts: i.ts })),
  );
  assert.deepEqual(Object.keys(some.json[0]), ['node', 'ts']);

  const record = await runEstate(['state', 'heartbeat', '--json', 'name,size_chars', '--data-dir', dir]);
  assert.deepEqual(Object.keys(record.json), ['name', 'size_chars']);
  assert.equal(record.json.name, 'heartbeat');

  // A word after --json on a command still short of its argument is that argument, as before.
  const file = await runEstate(['state', '--json', 'heartbeat', '--data-dir', dir]);
  assert.equal(file.code, 0, file.stderr);
  assert.equal(file.json.name, 'heartbeat');
  assert.equal(typeof file.json.content, 'string');

  const unknown = await runEstate(['trends', '--json', 'ts,nope', '--data-dir', dir]);
  assert.equal(unknown.code, 2);
  assert.equal(unknown.stdout, '');
  assert.match(unknown.stderr, /^estate: unknown JSON field "nope"; available fields: ts, node, cpu_pct/);
});

test('bad output options are usage errors (exit 2) with nothing on stdout', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  for (const [args, message] of [
    [['-o', 'xml'], /Allowed choices are json, yaml, tsv, csv, table, wide/],
    [['--json', '-o', 'yaml'], /--json and -o yaml ask for two formats/],
    [['--json', 'ts,,node'], /--json takes field names separated by commas/],
  ] as const) {
    const r = await runEstate(['trends', ...args, '--data-dir', dir]);
    assert.equal(r.code, 2, args.join(' '));
    assert.equal(r.stdout, '');
    assert.match(r.stderr, message);
  }
});

test('-o table and -o wide when piped: boxes as asked, no colour, every field and absolute times in wide', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const table = await runEstate(['disk', '--limit', '2', '-o', 'table', '--data-dir', dir]);
  assert.match(table.stdout, BOX);
  assert.doesNotMatch(table.stdout, /\x1b|items/);
  const wide = await runEstate(['trends', 'latest', '-o', 'wide', '--data-dir', dir]);
  assert.match(wide.stdout, /│ ts +│ 2026-11-22T00:00:00\.000Z/);
});
