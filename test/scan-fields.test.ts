import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import type { JsonRecord } from '../src/core/jsonl/parse-record.ts';
import { BLANK, scanFields, WantedFields } from '../src/core/jsonl/scan-fields.ts';
import { RecordLog } from '../src/core/record-log.ts';
import { tempDataDir } from './helpers/data-dir.ts';

// The log index reads only the fields it needs from each line (scanFields)
// instead of JSON.parse-ing whole records. It must never disagree with
// JSON.parse: when it answers, the line is a JSON object and the fields are
// JSON.parse's; when unsure it says so, and the index parses the line.

const WANTED = ['id', 'board', 'n', 'flag', 'note', 'é'];
const wanted = new WantedFields(WANTED);

function scan(line: string) {
  const buf = Buffer.from(`${line}\n`, 'utf8');
  return scanFields(buf, 0, buf.length - 1, wanted);
}

function parsed(line: string): JsonRecord | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonRecord) : undefined;
  } catch {
    return undefined;
  }
}

/** scanFields' answer agrees with JSON.parse's; returns what it answered. */
function agrees(line: string): 'blank' | 'record' | 'unsure' {
  const answer = scan(line);
  if (answer === BLANK) {
    assert.equal(line.trim(), '', `blank: ${JSON.stringify(line)}`);
    return 'blank';
  }
  if (answer === undefined) return 'unsure';
  const full = parsed(line);
  assert.ok(full, `scanFields read ${JSON.stringify(line)} as a record; JSON.parse does not`);
  const expected = Object.fromEntries(WANTED.filter((f) => Object.hasOwn(full, f)).map((f) => [f, full[f]]));
  assert.deepEqual({ ...answer }, expected, JSON.stringify(line));
  return 'record';
}

const CASES: [string, string, 'blank' | 'record' | 'unsure'][] = [
  ['a completion', '{"id":"wc_1","task_id":"T-1","board":"ops","title":"Fix \\"it\\" now","n":12}', 'record'],
  ['spaces, CR and tabs', ' \t{ "id" : "x" ,\t"board":"b" }\r', 'record'],
  ['empty object', '{}', 'record'],
  ['numbers', '{"n":-0.5e+3,"x":0,"y":1E2,"z":-12}', 'record'],
  ['literals', '{"flag":true,"note":null,"x":false}', 'record'],
  ['a repeated key: the last wins', '{"board":"a","board":"b"}', 'record'],
  ['escapes in values', '{"board":"a\\u00e9\\n\\/\\\\","id":"\\ud83d\\ude00"}', 'record'],
  ['non-ASCII bytes', '{"board":"épée 🙂","é":"ü"}', 'record'],
  ['blank', '  \t ', 'blank'],
  ['empty line', '', 'blank'],
  ['a nested value is left to JSON.parse', '{"board":"a","x":{"y":[1,2]}}', 'unsure'],
  ['an escaped key is left to JSON.parse', '{"bo\\u0061rd":"a"}', 'unsure'],
  ['an array', '[1,2]', 'unsure'],
  ['a scalar', '"x"', 'unsure'],
  ['torn', '{"id":"wc_1","board":"o', 'unsure'],
  ['trailing comma', '{"id":"x",}', 'unsure'],
  ['trailing garbage', '{"id":"x"}x', 'unsure'],
  ['two objects', '{"id":"x"}{"id":"y"}', 'unsure'],
  ['a leading zero', '{"n":01}', 'unsure'],
  ['a bare minus', '{"n":-}', 'unsure'],
  ['a dot without digits', '{"n":1.}', 'unsure'],
  ['an exponent without digits', '{"n":1e}', 'unsure'],
  ['a bad escape', '{"board":"a\\x"}', 'unsure'],
  ['a short unicode escape', '{"board":"\\u12"}', 'unsure'],
  ['a raw control character', '{"board":"a\tb"}', 'unsure'],
  ['single quotes', "{'id':'x'}", 'unsure'],
  ['a word that is not a literal', '{"flag":truth}', 'unsure'],
  ['a missing colon', '{"id" "x"}', 'unsure'],
  ['a missing value', '{"id":}', 'unsure'],
  ['a byte-order mark', '\ufeff{"id":"x"}', 'unsure'],
  ['a backslash at the very end', '{"id":"x\\', 'unsure'],
  ['no-break spaces only', '\u00a0\u00a0', 'unsure'],
];

test('scanFields answers like JSON.parse, or says it is unsure', async (t) => {
  for (const [name, line, expected] of CASES) {
    await t.test(name, () => assert.equal(agrees(line), expected));
  }
});

test('scanFields never disagrees with JSON.parse on random and mangled lines', () => {
  // A small deterministic generator (xorshift), so a failure is reproducible.
  let seed = 0x2545f491;
  const random = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const values = ['"x"', '""', '"a\\"b"', '"é"', '"\\u0041"', '0', '-1.5e3', '12', 'true', 'false', 'null', '{}', '[1,{"a":2}]', '"\\\\"'];
  const keys = [...WANTED, 'other', 'title', '__proto__', 'b\\u006fard'];
  const spaces = ['', ' ', '\t', ' \r'];
  const counts = { blank: 0, record: 0, unsure: 0 };
  for (let i = 0; i < 20_000; i++) {
    const members = Array.from({ length: Math.floor(random() * 5) }, () => `${pick(spaces)}"${pick(keys)}"${pick(spaces)}:${pick(spaces)}${pick(values)}${pick(spaces)}`);
    let line = `${pick(spaces)}{${members.join(',')}}${pick(spaces)}`;
    // Mangle one in three: cut it short, or change, drop or double a byte.
    if (random() < 1 / 3) {
      const at = Math.floor(random() * (line.length + 1));
      const how = Math.floor(random() * 4);
      if (how === 0) line = line.slice(0, at);
      else if (how === 1) line = line.slice(0, at) + pick(['"', '\\', ',', ':', '{', '}', '[', 'x', '0', '-', '.', 'e', ' ']) + line.slice(at + 1);
      else if (how === 2) line = line.slice(0, at) + line.slice(at + 1);
      else line = line.slice(0, at) + line.slice(at, at + 1) + line.slice(at);
    }
    counts[agrees(line)]++;
  }
  // Most well-formed lines are read by the scanner itself, not left to JSON.parse.
  assert.ok(counts.record > 8000, JSON.stringify(counts));
  assert.ok(counts.unsure > 1000, JSON.stringify(counts));
});

test('an index read field by field answers as one built from parsed records', async (t) => {
  const file = path.join(await tempDataDir(t), 'a.jsonl');
  const lines: string[] = [];
  for (let i = 0; i < 3000; i++) {
    const group = `g${i % 4}`;
    const shapes = [
      JSON.stringify({ k: `k${i}`, id: `id-${i}`, group, t: 1000 + i }),
      `{"k": "k${i}", "id": "id-${i}", "group": "${group}", "t": ${1000 + i}, "nested": {"a": [1, 2]}}`,
      `{"k":"k${i}","id":"id-${i}","gr\\u006fup":"${group}","t":${1000 + i}}`,
      `{"k":"k${i}","id":"id-${i}","group":"${group}","group":"g9","t":${1000 + i}}`,
      `{"k":"k${i}","id":"id-${i}","group":"${group}","t":"late"}`,
      `{"k":"k${i}","id":"id-${i}","group":"${group}",}`,
      `{"k":"k${i}","id":"id-${i}","group":"${group}\\u0021"}`,
      '   ',
      `[{"k":"k${i}"}]`,
    ];
    lines.push(shapes[i % shapes.length] as string);
  }
  await writeFile(file, `${lines.join('\n')}\n`);
  const options = {
    file,
    accept: (r: JsonRecord) => typeof r.k === 'string',
    key: (r: JsonRecord) => r.k as string,
    facets: { group: (r: JsonRecord) => r.group as string | undefined },
    uniqueFacets: { id: (r: JsonRecord) => r.id as string | undefined },
    tally: { time: (r: JsonRecord) => (typeof r.t === 'number' ? r.t : Number.NaN), by: (r: JsonRecord) => r.group as string | undefined },
  };
  const scanned = new RecordLog({ ...options, fields: ['k', 'id', 'group', 't'] });
  const whole = new RecordLog(options);
  for (const group of ['g0', 'g1', 'g2', 'g3', 'g9', 'g1!']) {
    assert.deepEqual(await scanned.since('start', 5000, { facet: 'group', value: group }), await whole.since('start', 5000, { facet: 'group', value: group }), group);
  }
  assert.deepEqual(await scanned.tally([1500, 3000]), await whole.tally([1500, 3000]));
  assert.deepEqual(await scanned.find('id', 'id-2999'), await whole.find('id', 'id-2999'));
  assert.equal((await scanned.tally([0])).count, (await whole.tally([0])).count);
});
