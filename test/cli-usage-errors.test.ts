import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runEstate } from './helpers/cli.ts';

// commander's own usage errors (an unknown option or command, an argument
// missing or too many, a value not among the choices) are one line on
// stderr and exit 2, as every other error: the suggestion commander makes
// on that line, else where the usage is.

test('commander\'s usage errors are one line on stderr, exit 2, with the suggestion commander gives', async () => {
  const cases: [string, string[], string][] = [
    ['an unknown option', ['trends', '--limt', '5'], "estate: unknown option '--limt' (did you mean --limit?)"],
    ['an unknown option without a near one', ['trends', '--zzzz'], "estate: unknown option '--zzzz' (see estate trends --help)"],
    ['an unknown option before the command', ['--bogus', 'trends'], "estate: unknown option '--bogus' (see estate --help)"],
    ['an unknown command', ['trnds'], "estate: unknown command 'trnds' (did you mean trends?)"],
    ['an unknown subcommand', ['work', 'feeed'], "estate: unknown command 'work feeed' (did you mean feed?)"],
    ['an unknown subcommand of a command that is no operation', ['keys', 'lst'], "estate: unknown command 'keys lst' (did you mean list?)"],
    ['a missing argument', ['publish', 'by-site'], "estate: missing required argument 'site' (see estate publish by-site --help)"],
    ['too many arguments', ['state', 'a', 'b'], "estate: too many arguments for 'state'. Expected 1 argument but got 2 (see estate state --help)"],
    ['an option without its value', ['trends', '--limit'], "estate: option '--limit <value>' argument missing (see estate trends --help)"],
    ['a value not among the choices', ['trends', '-o', 'xml'], "estate: option '-o, --output <format>' argument 'xml' is invalid. Allowed choices are json, yaml, tsv, csv, table, wide"],
  ];
  const runs = await Promise.all(cases.map(([, args]) => runEstate(args)));
  cases.forEach(([name, , line], i) => {
    const r = runs[i] as (typeof runs)[number];
    assert.equal(r.stderr, `${line}\n`, name);
    assert.equal(r.code, 2, name);
    assert.equal(r.stdout, '', name);
  });
});
