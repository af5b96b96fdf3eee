import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commandTree, describeCommandTree } from '../src/cli/command-tree.ts';
import { buildProgram } from '../src/cli/program.ts';
import { runEstate } from './helpers/cli.ts';
import { DEMO_FIXTURE, tempDataDir } from './helpers/data-dir.ts';
import { newKey, startServer } from './helpers/server.ts';

// `--help` speaks with one voice: every group says what it is for, option
// descriptions are sentences without a final period, required options are
// marked and all named when missing, `estate help NAME` refuses unknown
// commands, validation names a pattern in words, and the exit codes a cron
// job acts on (4 credential, 5 conflict) are documented and returned.

const io = { env: {}, stdout: () => {}, stderr: () => {}, isTTY: false, onStop: () => new Promise<string>(() => {}) };

/** The description line of a `--help` text: the paragraph after `Usage:`. */
const descriptionOf = (help: string): string => help.split('\n\n')[1]?.split('\n')[0] ?? '';

test('every command group (and the program) shows a description in its --help, from the real binary', async () => {
  const program = buildProgram(io);
  const groups = ['estate', ...commandTree(program).filter(({ cmd }) => cmd.commands.some((c) => c.name() !== 'help')).map(({ name }) => name)];
  for (const group of ['estate work', 'estate publish', 'estate training', 'estate keys', 'estate forge']) assert.ok(groups.includes(group), group);
  const helps = await Promise.all(groups.map((g) => runEstate([...g.split(' ').slice(1), '--help'])));
  groups.forEach((group, i) => {
    const r = helps[i] as (typeof helps)[number];
    assert.equal(r.code, 0, `${group} --help: ${r.stderr}`);
    assert.match(r.stdout, new RegExp(`^Usage: ${group} `), group);
    const description = descriptionOf(r.stdout);
    assert.match(description, /^[A-Z][^\n]{10,}$/, `${group} --help has no description line: ${JSON.stringify(r.stdout.slice(0, 120))}`);
    assert.ok(!description.startsWith('Options:'), group);
  });
});

test('every command has a description; option and argument descriptions are sentences without a final period, one wording per flag for shared options', () => {
  const tree = describeCommandTree(buildProgram(io));
  const byFlag = new Map<string, Set<string>>();
  for (const c of tree) {
    const name = ['estate', ...c.words].join(' ');
    assert.ok(c.description, `${name} has a description`);
    for (const text of [...c.options.map((o) => o.description), ...c.arguments.map((a) => a.description)]) {
      assert.match(text, /^[A-Z`$(]/, `${name}: "${text}" starts a sentence`);
      assert.doesNotMatch(text, /[^.]\.$/, `${name}: "${text}" ends without a period`);
    }
    for (const o of c.options) byFlag.set(o.long ?? '', new Set([...(byFlag.get(o.long ?? '') ?? []), o.description]));
  }
  for (const flag of ['--help', '--data-dir', '--config', '--debug']) {
    const texts = [...(byFlag.get(flag) ?? [])].filter((d) => !d.includes('to create'));
    assert.equal(texts.length, 1, `${flag}: ${texts.join(' | ')}`);
  }
});

test('estate help NAME: the help of a known command, one line and exit 2 for an unknown one', async () => {
  const known = await runEstate(['help', 'work', 'complete']);
  assert.equal(known.code, 0, known.stderr);
  assert.match(known.stdout, /^Usage: estate work complete /);
  for (const [args, name] of [
    [['help', 'nosuch'], 'nosuch'],
    [['help', 'work', 'nosuch'], 'work nosuch'],
  ] as const) {
    const r = await runEstate(args);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, new RegExp(`^estate: unknown command '${name}'[^\n]*\n$`));
  }
});

test('--help marks required options, and a command missing several names them all (exit 2), locally and remotely', async (t) => {
  const help = await runEstate(['work', 'complete', '--help']);
  const lineOf = (flag: string) => help.stdout.slice(help.stdout.indexOf(`  ${flag} `)).split(/\n {2}-/)[0] as string;
  for (const flag of ['--task-id', '--board', '--assignee', '--title']) assert.match(lineOf(flag), /\(required\)/, flag);
  for (const flag of ['--commit-sha', '--summary', '--json']) assert.doesNotMatch(lineOf(flag), /\(required\)/, flag);
  assert.match((await runEstate(['keys', 'create', '--help'])).stdout, /--user <user> +The user the key acts as \(required\)/);

  const dir = await tempDataDir(t);
  const server = await startServer(t, dir);
  const key = await newKey(dir, 'cron');
  const partial = ['work', 'complete', '--task-id', 'T-1', '--board', 'ops'];
  for (const target of [['--data-dir', dir], ['--url', server.url, '--api-key', key]]) {
    const r = await runEstate([...partial, ...target]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr, 'estate: missing --assignee, --title\n');
  }
  const none = await runEstate(['publish', 'register', '--data-dir', dir]);
  assert.equal(none.stderr, 'estate: missing --title, --slug, --content-type, --target-site\n');
  const user = await runEstate(['keys', 'create', '--data-dir', dir]);
  assert.deepEqual([user.code, user.stderr], [2, 'estate: missing --user\n']);
});

test('a value that fails a pattern is described in words: the CLI line and the 422 msg (type unchanged)', async (t) => {
  const dir = await tempDataDir(t);
  const cli = await runEstate(['work', 'complete', '--task-id', 'T-1', '--board', 'Ops Board', '--assignee', 'cron', '--title', 'x', '--data-dir', dir]);
  assert.equal(cli.code, 2);
  assert.equal(cli.stderr, 'estate: invalid --board: String should be a slug: lowercase letters, digits and hyphens (no hyphen at either end or twice in a row)\n');

  const server = await startServer(t, dir);
  const key = await newKey(dir, 'cron');
  const body = { task_id: 'T-1', board: 'ops', assignee: 'cron', title: 'x' };
  const cases: [Record<string, string>, string, RegExp][] = [
    [{ board: 'Ops Board' }, 'board', /^String should be a slug: lowercase letters, digits and hyphens/],
    [{ title: 'a\u001bb' }, 'title', /^String should be one line of text, without control characters/],
    [{ summary: 'a\u001bb' }, 'summary', /^String should be text without control characters .*line breaks and tabs are allowed/],
    [{ commit_sha: 'xyz' }, 'commit_sha', /^String should be a commit hash: 7 to 40 hex digits$/],
  ];
  for (const [change, field, msg] of cases) {
    const r = await server.request('POST', '/work/complete', { body: { ...body, ...change }, headers: { 'X-API-Key': key } });
    assert.equal(r.status, 422, r.text);
    assert.deepEqual(r.json.detail.map((d: { loc: unknown; type: string }) => [d.loc, d.type]), [[['body', field], 'string_pattern_mismatch']]);
    assert.match(r.json.detail[0].msg, msg);
    assert.doesNotMatch(r.json.detail[0].msg, /\^|\$'|\\x/, 'no regex');
  }
  const forge = await server.get('/forgejo-proxy/issues/bad%20name/x', { 'X-API-Key': key });
  assert.equal(forge.status, 422, forge.text);
  assert.equal(forge.json.detail[0].type, 'string_pattern_mismatch');
  assert.match(forge.json.detail[0].msg, /^String should be a forge name: /);
});

test('exit codes: documented in --help; 4 for a missing or refused credential, 5 for a conflicting write', async (t) => {
  const help = await runEstate(['--help']);
  assert.match(help.stdout, /Exit status: 0 success, 1 failure, 2 invalid usage or input, 3 not found,\s+4 credential missing or refused, 5 conflicting write\./);
  assert.match(help.stdout, /estate completion bash/);
  // The footer names the output options, not only --json.
  const footer = help.stdout.slice(help.stdout.indexOf('\nEvery read command'));
  for (const option of ['--json', '-o json|yaml|tsv|csv|table|wide', '--no-headers']) assert.ok(footer.includes(option), `the --help footer names ${option}`);

  const dir = await tempDataDir(t);
  const server = await startServer(t, dir);
  const key = await newKey(dir, 'cron');
  const complete = (summary: string) => ['work', 'complete', '--task-id', 'T-1', '--board', 'ops', '--assignee', 'cron', '--title', 'x', '--summary', summary];
  assert.equal((await runEstate([...complete('first'), '--data-dir', dir])).code, 0);
  const local = await runEstate([...complete('second'), '--data-dir', dir]);
  assert.equal(local.code, 5, local.stderr);
  const remote = await runEstate([...complete('second'), '--url', server.url, '--api-key', key]);
  assert.equal(remote.code, 5, remote.stderr);
  const noKey = await runEstate([...complete('first'), '--url', server.url]);
  assert.equal(noKey.code, 4, noKey.stderr);
  const badKey = await runEstate(['training', 'list', '--url', server.url, '--api-key', 'nope']);
  assert.equal(badKey.code, 4, badKey.stderr);
});

test('each command\'s --json help names fields of its own answer, and they work: --json THOSE prints just them', async (t) => {
  const dir = await tempDataDir(t, DEMO_FIXTURE);
  const tree = commandTree(buildProgram(io)).filter(({ cmd }) => cmd.options.some((o) => o.flags === '--json [fields]'));
  assert.ok(tree.length > 30, `${tree.length} commands take --json [fields]`);
  const helps = await Promise.all(tree.map(({ name }) => runEstate([...name.split(' ').slice(1), '--help'])));
  const examples = new Map<string, string | undefined>();
  tree.forEach(({ name }, i) => {
    const help = (helps[i] as (typeof helps)[number]).stdout.replace(/\s+/g, ' ');
    const m = / --json \[fields\] Print the JSON body the HTTP API returns; with FIELDS(?: \(([\w,]+)\))?, only those fields/.exec(help);
    assert.ok(m, `${name}: ${help}`);
    examples.set(name, m[1]);
  });
  assert.equal(examples.get('estate builds'), 'days,since');
  assert.equal(examples.get('estate work feed'), 'task_id,board');
  assert.equal(examples.get('estate keys list'), 'key_id,user_id');
  assert.equal(examples.get('estate pulse status'), undefined, 'a bare value has no fields to name');
  assert.ok([...examples.values()].filter((e) => e === 'ts,node').length <= 1, 'not every command names ts,node');

  // Every example of a command that reads the demo data dir as it is picks those fields from its answer.
  const readable = ['trends', 'trends latest', 'disk', 'disk latest', 'pulse', 'builds', 'builds recent', 'events', 'state', 'agents', 'status', 'logs', 'work feed', 'publish latest', 'garden', 'health', 'info', 'keys list'];
  const runs = await Promise.all(readable.map((name) => runEstate([...name.split(' '), '--json', examples.get(`estate ${name}`) ?? 'missing', '--data-dir', dir])));
  readable.forEach((name, i) => {
    const r = runs[i] as (typeof runs)[number];
    const fields = (examples.get(`estate ${name}`) ?? '').split(',');
    assert.equal(r.code, 0, `${name} --json ${fields.join(',')}: ${r.stderr}`);
    const objects = Array.isArray(r.json) ? r.json : [r.json];
    for (const o of objects) assert.deepEqual(Object.keys(o), fields, name);
  });
});
