import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';
import { ROOT } from './helpers/data-dir.ts';
import { skipWithout } from './helpers/required-tool.ts';

// man/estate.1 is generated from the command tree (`npm run man`); these
// tests fail when the checked-in page falls behind `estate --help`.

const MAN_FILE = path.join(ROOT, 'man', 'estate.1');
const page = () => readFileSync(MAN_FILE, 'utf8');
/** How the page writes a text: minus signs escaped. */
const troff = (text: string) => text.replace(/-/g, '\\-');

/** Subcommand names and long options of one `--help` text. */
function parseHelp(text: string): { commands: string[]; options: string[] } {
  const section = (title: string) => {
    const at = text.indexOf(`\n${title}:\n`);
    if (at === -1) return [];
    const rest = text.slice(at + title.length + 3);
    const end = rest.search(/\n\S|\n\n\S/);
    return (end === -1 ? rest : rest.slice(0, end)).split('\n');
  };
  const commands = section('Commands')
    .map((l) => /^ {2}(\S+)/.exec(l)?.[1])
    .filter((c): c is string => c !== undefined && c !== 'help');
  const options = section('Options').flatMap((l) => [.../^ {2}(?:-\w, )?(--[\w-]+)/.exec(l)?.slice(1) ?? []]);
  return { commands, options };
}

/** Every command path of `estate --help`, recursively, with its options, from the real binary. */
async function helpTree(): Promise<Map<string, string[]>> {
  const tree = new Map<string, string[]>();
  let level = ['estate'];
  while (level.length) {
    const helps = await Promise.all(level.map((name) => runEstate([...name.split(' ').slice(1), '--help'])));
    const next: string[] = [];
    level.forEach((name, i) => {
      const r = helps[i] as (typeof helps)[number];
      assert.equal(r.code, 0, `${name} --help: ${r.stderr}`);
      const { commands, options } = parseHelp(r.stdout);
      tree.set(name, options);
      next.push(...commands.map((c) => `${name} ${c}`));
    });
    level = next;
  }
  return tree;
}

test('man/estate.1 is what `estate man` renders from the current command tree (run `npm run man` to refresh it)', async () => {
  const r = await runEstate(['man']);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(r.stdout === page(), 'man/estate.1 is stale: run `npm run man` and commit the result');
});

test('the man page names every command of `estate --help`, recursively, with every option', async () => {
  const text = page();
  const tree = await helpTree();
  assert.ok(tree.size > 20, `estate --help has ${tree.size} commands`);
  const sections = text.split(/^\.SS /m);
  for (const [name, options] of tree) {
    if (name === 'estate') {
      for (const o of options) assert.ok(text.split('.SH COMMANDS')[0]?.includes(troff(o)), `OPTIONS lists ${o}`);
      continue;
    }
    const section = sections.find((s) => s.startsWith(`"${troff(name)}"\n`));
    assert.ok(section, `the man page has no section for "${name}"`);
    for (const o of options) {
      if (o === '--help') continue;
      assert.ok(section.includes(`\\fB${troff(o)}\\fR`), `"${name}" in the man page does not name ${o}`);
    }
  }
});

test('the man page has no Markdown left: code spans are bold, not in backticks (examples, shown as typed, aside)', () => {
  const prose = page().replace(/^\.nf\n[\s\S]*?^\.fi\n/gm, '');
  const backticks = prose.split('\n').filter((line) => line.includes('`'));
  assert.deepEqual(backticks, []);
  assert.ok(prose.includes('\\fBestate init\\fR creates a valid empty one'), 'a code span reads in bold');
});

test('the man page has the standard sections, and package.json declares it', () => {
  const text = page();
  for (const s of ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'OPTIONS', 'COMMANDS', 'ENVIRONMENT', 'FILES', 'EXIT STATUS', 'EXAMPLES']) {
    assert.match(text, new RegExp(`^\\.SH "?${s}"?$`, 'm'), `section ${s}`);
  }
  for (const v of ['ESTATE_DATA_DIR', 'XDG_DATA_HOME', 'ESTATE_API_KEY', 'ESTATE_URL', 'NO_COLOR']) assert.ok(text.includes(`\\fB${troff(v)}\\fR`), `ENVIRONMENT names ${v}`);
  for (const f of ['trends.jsonl', 'work/completions.jsonl', 'keys.json', 'estate.config.json']) assert.ok(text.includes(troff(f)), `FILES names ${f}`);
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { man?: string[] };
  assert.deepEqual(pkg.man, ['./man/estate.1']);
});

const hasMan = spawnSync('man', ['--version'], { encoding: 'utf8' }).status === 0;

test('`man -l man/estate.1` renders it without warnings', (t) => {
  if (skipWithout(t, !hasMan && 'man is not installed (apt-get install man-db)')) return;
  const r = spawnSync('man', ['--warnings', '-l', MAN_FILE], { encoding: 'utf8', env: { ...process.env, MANWIDTH: '80', MANPAGER: 'cat', PAGER: 'cat', LANG: 'C.UTF-8' } });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '', 'no troff warnings');
  const out = r.stdout.replace(/.\x08/g, '');
  assert.match(out, /^ESTATE\(1\)/);
  for (const s of ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'COMMANDS', 'ENVIRONMENT', 'FILES', 'EXIT STATUS', 'EXAMPLES']) assert.match(out, new RegExp(`^${s}$`, 'm'));
  assert.match(out, /estate - operations toolkit/);
  assert.match(out, /estate trends latest/);
});
