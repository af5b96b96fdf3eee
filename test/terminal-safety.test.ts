import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { startAnswering } from './helpers/fake-upstreams.ts';
import { skipWithout } from './helpers/required-tool.ts';
import { NO_TERMINAL, runEstateInTerminal } from './helpers/terminal.ts';

// What the CLI prints from data never drives the terminal: C0 and C1
// controls, bidi overrides and isolates become visible escapes in tables and
// in error lines; `--json` stays the exact JSON of the HTTP body.

/** OSC (set the window title, ring the bell), CSI (clear the screen), an 8-bit CSI, a bidi override and an isolate. */
const HOSTILE = '\x1b]0;pwned\x07\x1b[2Jnode\x9b31m\u202egnp.exe\u2066';
const VISIBLE = '\\x1b]0;pwned\\x07\\x1b[2Jnode\\x9b31m\\u202egnp.exe\\u2066';

async function dataDirWithHostileTrend(t: Parameters<typeof tempDataDir>[0]) {
  const dir = await tempDataDir(t);
  const point = { ts: '2026-11-08T00:05:00.000Z', node: HOSTILE, [`\x1b[8m${'k'}`]: 1 };
  await writeFile(path.join(dir, 'trends.jsonl'), `${JSON.stringify(point)}\n`);
  return dir;
}

/** Escape characters other than the colour codes (SGR) the renderer draws itself; and C1, bidi, BEL. */
function unsafeIn(text: string): string[] {
  return [...text.matchAll(/\x1b(?!\[[0-9;]*m)|[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g)].map((m) => JSON.stringify(m[0]));
}

test('on a terminal, a trend point\'s OSC, CSI, C1 and bidi characters print as visible escapes in tables', async (t) => {
  if (skipWithout(t, NO_TERMINAL)) return;
  const dir = await dataDirWithHostileTrend(t);
  for (const env of [{}, { NO_COLOR: '1' }] as Record<string, string>[]) {
    for (const args of [['trends'], ['trends', 'latest']]) {
      const r = await runEstateInTerminal([...args, '--data-dir', dir], { env });
      assert.equal(r.code, 0, r.output);
      assert.deepEqual(unsafeIn(r.output), [], r.output);
      assert.ok(r.output.includes(VISIBLE.slice(0, 40)), r.output);
      assert.ok(r.output.includes('\\x1b[8mk'), 'a key from data is escaped too');
      if (!env.NO_COLOR) assert.match(r.output, /\x1b\[1m/, 'colours still drawn on a terminal');
    }
  }
});

test('in a pipe, tables are escaped the same way; --json is the exact JSON body', async (t) => {
  const dir = await dataDirWithHostileTrend(t);
  const table = await runEstate(['trends', 'latest', '--data-dir', dir]);
  assert.equal(table.code, 0, table.stderr);
  assert.deepEqual(unsafeIn(table.stdout), []);
  assert.ok(table.stdout.includes(VISIBLE.slice(0, 40)), table.stdout);
  const json = await runEstate(['trends', 'latest', '--json', '--data-dir', dir]);
  assert.equal(json.json.node, HOSTILE, 'the data itself, unchanged');
  assert.equal(json.stdout, `${JSON.stringify(json.json, null, 2)}\n`);
  assert.ok(json.stdout.includes('\\u001b]0;pwned\\u0007'), 'JSON escapes the controls itself');
});

test('an error line quoting a server escapes its controls and stays one line, on a terminal or not', async (t) => {
  const detail = 'no \x1b[2J\x1b]0;x\x07 such \x9b thing\u202e\nsecond line';
  const server = createServer((_req, res) => {
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ detail }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const expected = `estate: ${url}: no \\x1b[2J\\x1b]0;x\\x07 such \\x9b thing\\u202e\\nsecond line\n`;
  const piped = await runEstate(['trends', '--url', url]);
  assert.equal(piped.code, 3);
  assert.equal(piped.stderr, expected);
  if (!skipWithout(t, NO_TERMINAL)) {
    const tty = await runEstateInTerminal(['trends', '--url', url]);
    assert.equal(tty.code, 3);
    assert.equal(tty.output, expected);
  }
});

test('a forge error body\'s escapes never reach stderr', async (t) => {
  const forge = await startAnswering(t, 500, { message: 'boom \x1b]8;;http://evil/\x07click\x1b]8;;\x07 \x9b2J\u202edone' });
  const dir = await tempDataDir(t);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ forge: { url: forge.url } }));
  const r = await runEstate(['forge', 'repos', '--data-dir', dir]);
  assert.equal(r.code, 1);
  assert.deepEqual(unsafeIn(r.stderr.slice(0, -1)), [], r.stderr);
  assert.match(r.stderr, /^estate: the forge at http:\/\/127\.0\.0\.1:\d+ answered 500 Internal Server Error: boom ]8;;http:\/\/evil\/ click ]8;; 2J done\n$/);
});
