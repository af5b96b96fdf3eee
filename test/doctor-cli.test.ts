import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { VERSION } from '../src/version.ts';
import { runEstate } from './helpers/cli.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { refusedUrl, sendJson, startFake } from './helpers/fake-upstreams.ts';
import { newKey, startServer } from './helpers/server.ts';
import { skipWithout } from './helpers/required-tool.ts';
import { NO_TERMINAL, runEstateInTerminal } from './helpers/terminal.ts';

const RED_FAIL = '\x1b[31mFAIL\x1b[0m';
const YELLOW_WARN = '\x1b[33mWARN\x1b[0m';

type Check = { name: string; status: string; detail: string; fix: string | null };
const statuses = (checks: Check[]) => checks.map((c) => [c.name, c.status]);

test('estate doctor on a data dir that does not exist says so, checks no config, and exits 1', async (t) => {
  const dir = path.join(await tempDataDir(t), 'nope');
  const r = await runEstate(['doctor', '--data-dir', dir]);
  assert.equal(r.code, 1);
  assert.equal(
    r.stdout,
    `FAIL  data dir  ${dir} does not exist\n      fix: create it with: estate init ${dir}\nskip  config    not checked: there is no data dir to read estate.config.json from\n`,
  );
  assert.doesNotMatch(r.stdout, /valid/);
  assert.equal(r.stderr, 'estate: doctor: 1 of 2 checks failed\n');
});

test('estate doctor colours FAIL and WARN on a terminal only, and never with NO_COLOR', async (t) => {
  if (skipWithout(t, NO_TERMINAL)) return;
  const missing = path.join(await tempDataDir(t), 'nope');
  const onTerminal = await runEstateInTerminal(['doctor', '--data-dir', missing]);
  assert.equal(onTerminal.code, 1);
  assert.ok(onTerminal.output.includes(`${RED_FAIL}  data dir`), JSON.stringify(onTerminal.output));

  const noColor = await runEstateInTerminal(['doctor', '--data-dir', missing], { env: { NO_COLOR: '1' } });
  assert.equal(noColor.code, 1);
  assert.match(noColor.output, /(^|\x1b\[2K)FAIL {2}data dir/m);
  assert.ok(!noColor.output.includes('\x1b[31m'));

  const piped = await runEstate(['doctor', '--data-dir', missing], { env: { NO_COLOR: '' } });
  assert.equal(piped.code, 1);
  assert.ok(!piped.stdout.includes('\x1b['), JSON.stringify(piped.stdout));

  // A warning: a server checked without a key.
  const server = await startServer(t, await tempDataDir(t));
  const warned = await runEstateInTerminal(['doctor', '--url', server.url]);
  assert.equal(warned.code, 0, warned.output);
  assert.ok(warned.output.includes(`${YELLOW_WARN}  credential`), JSON.stringify(warned.output));
});

test('estate doctor --url checks a running server: reachable, ready, version, a valid key', async (t) => {
  const dir = await tempDataDir(t);
  const server = await startServer(t, dir);
  const key = await newKey(dir, 'alice');
  const r = await runEstate(['doctor', '--url', server.url, '--api-key', key, '--json']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.json.ok, true);
  assert.deepEqual(statuses(r.json.checks), [
    ['server', 'ok'],
    ['ready', 'ok'],
    ['version', 'ok'],
    ['credential', 'ok'],
  ]);
  assert.equal(r.json.checks[2].detail, `estate ${VERSION}, the same as this CLI`);

  // The key from the environment, and the text form.
  const text = await runEstate(['doctor', '--url', server.url], { env: { ESTATE_API_KEY: key } });
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^ok {4}server {6}http:\/\/127\.0\.0\.1:\d+ answered in \d+ ms$/m);
  assert.match(text.stdout, /^ok {4}credential {2}the API key is valid and may read$/m);
  assert.ok(!text.stdout.includes(key));
});

test('estate doctor --url with a wrong key fails the credential check without showing the key; no key is a warning', async (t) => {
  const dir = await tempDataDir(t);
  const server = await startServer(t, dir);
  const wrong = 'est_0123456789ab_notthekeynotthekeynotthekeynotth';
  const bad = await runEstate(['doctor', '--url', server.url, '--api-key', wrong]);
  assert.equal(bad.code, 1);
  assert.match(bad.stdout, /^FAIL {2}credential {2}.*refused the API key/m);
  assert.match(bad.stdout, /fix: pass a key this server knows/);
  assert.ok(!(bad.stdout + bad.stderr).includes(wrong));

  const none = await runEstate(['doctor', '--url', server.url, '--json']);
  assert.equal(none.code, 0);
  assert.deepEqual(none.json.checks[3], { name: 'credential', status: 'warn', detail: 'no API key given: only public routes will answer', fix: 'pass --api-key or set ESTATE_API_KEY' });
});

test('estate doctor --url on a closed port fails the server check and skips the rest', async () => {
  const url = await refusedUrl();
  const r = await runEstate(['doctor', '--url', url, '--api-key', 'k', '--json']);
  assert.equal(r.code, 1);
  assert.deepEqual(statuses(r.json.checks), [
    ['server', 'fail'],
    ['ready', 'skip'],
    ['version', 'skip'],
    ['credential', 'skip'],
  ]);
  assert.match(r.json.checks[0].detail, new RegExp(`^cannot reach ${url}: .*ECONNREFUSED`));
});

test('estate doctor --url warns of another version and fails a server that is not ready', async (t) => {
  const fake = await startFake(t, (req, res) => {
    if (req.url === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (req.url === '/readyz') return sendJson(res, 503, { detail: 'not ready: data_dir_writable failed (EROFS)' });
    if (req.url === '/') return sendJson(res, 200, { name: 'estate', version: '0.9.0' });
    return sendJson(res, 200, 'healthy');
  });
  const r = await runEstate(['doctor', '--url', fake.url, '--api-key', 'k', '--json']);
  assert.equal(r.code, 1);
  assert.deepEqual(statuses(r.json.checks), [
    ['server', 'ok'],
    ['ready', 'fail'],
    ['version', 'warn'],
    ['credential', 'ok'],
  ]);
  assert.equal(r.json.checks[1].detail, `${fake.url}: not ready: data_dir_writable failed (EROFS)`);
  assert.equal(r.json.checks[2].detail, `the server runs estate 0.9.0, this CLI is ${VERSION}`);
});

test('estate doctor --url refuses a data dir too, and an address that is not http(s) (exit 2)', async (t) => {
  const dir = await tempDataDir(t);
  const both = await runEstate(['doctor', '--url', 'http://127.0.0.1:9', '--data-dir', dir]);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /^estate: --url .*--data-dir.*one or the other\n$/);
  const notUrl = await runEstate(['doctor', '--url', 'notaurl']);
  assert.equal(notUrl.code, 2);
  assert.match(notUrl.stderr, /^estate: --url is not a server address/);
});

test('on an 80-column terminal, doctor\'s long lines (and fix: lines) wrap between words, under where their text began', async (t) => {
  if (skipWithout(t, NO_TERMINAL)) return;
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  for (const args of [['doctor', '--data-dir', dir], ['doctor', '--url', await refusedUrl()]]) {
    const piped = await runEstate(args);
    const long = piped.stdout.split('\n').filter((l) => l.length > 80);
    assert.ok(long.length > 0, `${args.join(' ')}: some check is longer than 80 columns: ${piped.stdout}`);
    const r = await runEstateInTerminal(args, { env: { COLUMNS: '80', NO_COLOR: '1' } });
    assert.equal(r.code, piped.code, r.output);
    // What the terminal got on stdout: the spinner (erased with CR or ESC[2K) and the last error line left out.
    const lines = r.output.replace(/^[^\n]*(?:\x1b\[2K|\r)/gm, '').split('\n').filter((l) => l && !l.startsWith('estate: '));
    for (const line of lines) assert.ok(line.length <= 80, `${JSON.stringify(line)} is ${line.length} wide`);
    assert.deepEqual(lines.join(' ').split(/ +/), piped.stdout.trim().split(/\s+/), 'the same words, none cut');
    const nameWidth = Math.max(...(JSON.parse((await runEstate([...args, '--json'])).stdout) as { checks: Check[] }).checks.map((c) => c.name.length));
    let inFix = false;
    for (const line of lines) {
      if (/^(ok|WARN|FAIL|skip) /.test(line)) inFix = false;
      else if (line.startsWith('      fix: ')) inFix = true;
      else assert.match(line, new RegExp(`^ {${inFix ? 11 : 8 + nameWidth}}\\S`), `${JSON.stringify(line)}: a hanging indent under the text it continues`);
    }
    assert.ok(lines.length > piped.stdout.trim().split('\n').length, 'some line wrapped');
  }
});
