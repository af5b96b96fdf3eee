import { Help, type Command, type Option } from 'commander';
import { VERSION } from '../version.ts';
import { commandTree } from './command-tree.ts';
import { commandExamples } from './help-examples.ts';
import { JSON_FIELDS_FLAGS } from './output/output-options.ts';

export { commandTree };

// man/estate.1, rendered from the commander tree (every visible command, its
// arguments, options and examples) plus the sections no command holds.
// `npm run man` rewrites the checked-in page; a test fails when it is stale.

/** Text for troff: backslashes and minus signs escaped, non-ASCII as `\[uXXXX]`, no line starting with a control character. */
function esc(text: string): string {
  return text
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/[^\x00-\x7f]/gu, (c) => `\\[u${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')}]`)
    .split('\n')
    .map((line) => (/^[.']/.test(line) ? `\\&${line}` : line))
    .join('\n');
}

/** Prose for troff: as esc, and Markdown code spans (`estate init`) in bold, without their backticks. */
function prose(text: string): string {
  return esc(text).replace(/`([^`\n]+)`/g, '\\fB$1\\fR');
}

/** `-V, --version` / `--limit <value>` with flags in bold and placeholders in italics. */
function term(flags: string): string {
  return flags
    .split(/\s+/)
    .map((word) => {
      const m = /^([<[])(.+)[>\]]$/.exec(word);
      if (m) return m[1] === '<' ? `\\fI${esc(m[2] as string)}\\fR` : `[\\fI${esc(m[2] as string)}\\fR]`;
      const [, flag, comma] = /^(.*?)(,?)$/.exec(word) as RegExpExecArray;
      return `\\fB${esc(flag as string)}\\fR${comma}`;
    })
    .join(' ');
}

/** One `.TP` item per line of `items`. */
function tagged(items: [string, string][]): string[] {
  return items.flatMap(([t, d]) => ['.TP', t, prose(d || '')]);
}

function example(lines: string[]): string[] {
  return lines.length ? ['.PP', 'Examples:', '.PP', '.RS 4', '.nf', ...lines.map((l) => esc(`$ ${l}`)), '.fi', '.RE'] : [];
}

/** What makes two options one: flags and description, but `--json [fields]` is one whatever fields its help names. */
const optionKey = (o: Option) => (o.flags === JSON_FIELDS_FLAGS ? o.flags : `${o.flags}\u0000${o.description}`);

const ENVIRONMENT: [string, string][] = [
  ['ESTATE_DATA_DIR', 'The data directory, when --data-dir is not given.'],
  ['XDG_DATA_HOME', 'Without --data-dir and ESTATE_DATA_DIR the data directory is $XDG_DATA_HOME/estate (default ~/.local/share/estate).'],
  ['ESTATE_URL', 'Call this estate server instead of the local data directory, as with --url.'],
  ['ESTATE_API_KEY', 'The credential for remote calls, as with --api-key; `estate serve` also accepts it as an API key of user "operator".'],
  ['ESTATE_CONTEXT', 'Call the server of this context of the contexts file, as with --context. Flags beat the environment, which beats the contexts file; ESTATE_URL with ESTATE_CONTEXT or ESTATE_DATA_DIR is a usage error.'],
  ['XDG_CONFIG_HOME', 'The contexts file is $XDG_CONFIG_HOME/estate/contexts.json (default ~/.config/estate/contexts.json).'],
  ['XDG_CACHE_HOME', 'What estate made of recent config files is kept in $XDG_CACHE_HOME/estate/checked-config.json (default ~/.cache/estate/checked-config.json), and the compiled CLI (V8 code caches) in $XDG_CACHE_HOME/estate/code-*.cache; estate never writes into its own install folder. Safe to delete.'],
  ['ESTATE_HOST_PREFIX', 'For `estate collect` and `estate serve --collect`: where the host\'s root file system is mounted (a container run with -v /:/host:ro), as with --host-prefix; every figure is then the host\'s.'],
  ['ESTATE_MAX_ANSWER_BYTES', 'The most bytes read of a remote server\'s answer, or of one event of its stream (default 67108864); past it the command fails with exit 1. Redirects are never followed in remote calls.'],
  ['FORGEJO_TOKEN', 'The forge access token (the variable is named by forge.token_env in the config; this is the default). Secrets never sit in the config file.'],
  ['NO_COLOR', 'When set and not empty, tables are never coloured. Colour is only used on a terminal.'],
];

const FILES: [string, string][] = [
  ['trends.jsonl', 'Trend points, one JSON object per line, with ts (ISO 8601); appended by `estate collect` or your collectors.'],
  ['disk.jsonl', 'Disk snapshots: ts, mount, total_bytes, used_bytes, free_bytes; appended by `estate collect` (one per local file system, with node and fs_type) or your collectors.'],
  ['health-pulse.jsonl', 'Health pulse entries: ts, status (healthy, degraded, unhealthy), optional checks; appended by `estate collect` (checks disk:MOUNT, memory, load, and collector naming what it could not read) or your collectors.'],
  ['collect/counters-NODE.json', 'The kernel counters of the node\'s last sample, for the rates of the next `estate collect`; safe to delete.'],
  ['builds.jsonl', 'Builds: ts, project, status (success, failure, cancelled), optional duration_s, ref, commit.'],
  ['state/scoreboard.json, state/heartbeat.json, state/estate_map.json', 'State files, any JSON; events are derived from the first two; `estate collect` merges its node\'s entry into the heartbeat.'],
  ['work/completions.jsonl', 'Task completions, written by estate only.'],
  ['work/starts.jsonl', 'The starts of runs (`estate work start`), written by estate only.'],
  ['events/watched.jsonl', 'The watched events (node_stale, schedule_*, pulse_*, provider_*) as `estate serve` first noticed them, each once; /events merges them with the derived ones. Written by estate only.'],
  ['publishing/entries.jsonl', 'Published entries, written by estate only.'],
  ['training/runs/RUN_ID.json', 'Training runs, one file each.'],
  ['training/users/HASH.json, training/index.json', 'The per-user index of training runs; safe to delete, rebuilt from the runs.'],
  ['repos.json', 'The repository ledger: an array of {name, url, description}.'],
  ['estate.config.json', 'Optional config: node_name, forge, providers, stats, identity, serve (see --config).'],
  ['keys.json', 'The credential store: API key hashes only, mode 0600.'],
  ['token-secret', 'The secret that signs access tokens, mode 0600, created by the first `estate token create`.'],
];

const CHECKED_CONFIG_TEXT =
  'What the last few config files were checked into, so the next command with the same file skips the check: used only when the text is byte for byte the same, by the same estate build, and the file is the user\'s own and nobody else may write it (it is written 0600). Safe to delete.';

const CONTEXTS_FILE_TEXT =
  'Default ~/.config/estate/contexts.json: {"current": NAME, "contexts": {NAME: {"url", and one of "api_key_env", "api_key_file", "api_key"}}}, written with mode 0600. Refused when others may write it, or read it while it names a credential.';

const EXIT_STATUS: [string, string][] = [
  ['0', 'Success.'],
  ['1', 'Failure: I/O error, remote error, unreachable source.'],
  ['2', 'Invalid usage or input (the same messages as the HTTP 422 details), or a missing data directory.'],
  ['3', 'Not found.'],
  ['4', 'A credential missing or refused (HTTP 403).'],
  ['5', 'A conflicting write (HTTP 409): the record exists with other fields.'],
];

/**
 * The man page of `program`, in troff (man macros). Deterministic: no date,
 * so a regenerated page differs only when the command tree does.
 */
export function renderManPage(program: Command): string {
  const help = new Help();
  const entries = commandTree(program);

  // An option several commands share is described once, under COMMON OPTIONS.
  const seen = new Map<string, { option: Option; count: number }>();
  for (const { cmd } of entries) {
    for (const o of help.visibleOptions(cmd)) {
      const found = seen.get(optionKey(o));
      if (found) found.count++;
      else seen.set(optionKey(o), { option: o, count: 1 });
    }
  }
  const common = new Set([...seen].filter(([, v]) => v.count >= 3 && v.option.long !== '--help').map(([k]) => k));
  const isHelp = (o: Option) => o.long === '--help';
  // `--json [fields]` as the program has it, naming no command's fields.
  const commonText = (o: Option) => (o.flags === JSON_FIELDS_FLAGS ? (program.options.find((p) => p.flags === o.flags) ?? o).description : o.description);

  const out: string[] = [
    `.TH ESTATE 1 "" "estate ${VERSION}" "User Commands"`,
    '.SH NAME',
    `estate \\- ${esc(program.description().replace(/^Operations toolkit/, 'operations toolkit'))}`,
    '.SH SYNOPSIS',
    '.B estate',
    '.I command',
    '[\\fIsubcommand\\fR] [\\fIarguments\\fR] [\\fIoptions\\fR]',
    '.br',
    '.B estate serve',
    '[\\fB\\-\\-host\\fR \\fIhost\\fR] [\\fB\\-\\-port\\fR \\fIport\\fR] [\\fB\\-\\-data\\-dir\\fR \\fIdir\\fR] [\\fB\\-\\-demo\\fR]',
    '.br',
    '.B estate',
    '[\\fB\\-V\\fR | \\fB\\-\\-version\\fR | \\fB\\-h\\fR | \\fB\\-\\-help\\fR]',
    '.SH DESCRIPTION',
    prose('estate is one program with faces over the same query functions: the command line, for operators and cron jobs, and `estate serve`, an HTTP API (with credentials, an OpenAPI 3.1 description at /api/openapi.json, Swagger UI at /api/docs and ReDoc at /api/redoc) with its own dashboard at /dashboard: every node, charts of the series over any window, the pulse, builds, events, schedules and the live work feed (the page is public; its protected panels ask for an API key once, kept in the browser tab).'),
    '.PP',
    prose('Its data lives in a data directory of append-only JSONL logs and JSON state files (see FILES). Every read command mirrors an HTTP route: it prints a table on a terminal and tab-separated rows under a header line in a pipe, or with --json the exact body the route returns; -o json|yaml|tsv|csv|table|wide and --no-headers choose another form. With --url (or ESTATE_URL) and a credential (--api-key or ESTATE_API_KEY) a command calls that server instead of reading the local data directory, with the same output.'),
    '.PP',
    prose('A third face is for agents: the Model Context Protocol, every operation a tool, over stdio with `estate mcp` (against the data directory, or with --url on a server) and over HTTP at /mcp on `estate serve` (Streamable HTTP, stateless, behind the same credentials: a key sees the tools it may call). Answers over 64 KB come in pages (the next_page tool); the state files, the OpenAPI document and the health are resources; daily_briefing is a prompt.'),
    '.PP',
    prose('Errors go to standard error as one line, without a stack trace unless --debug is given.'),
    '.PP',
    prose('Shell completion for bash, zsh and fish comes from the same command tree as this page: `estate completion bash` prints a script to source (see estate completion below); it completes commands, options and the state file names of the data directory.'),
    '.SH OPTIONS',
    ...tagged(help.visibleOptions(program).map((o) => [term(o.flags), o.description])),
    '.SH COMMANDS',
  ];
  for (const { name, cmd } of entries) {
    const usage = help.commandUsage(cmd);
    const rest = usage.startsWith(name) ? usage.slice(name.length).trim() : cmd.usage();
    out.push(`.SS "${esc(name)}"`, `\\fB${esc(name)}\\fR ${esc(rest)}`);
    if (cmd.description()) out.push('.PP', prose(cmd.description()));
    const subs = help.visibleCommands(cmd).filter((sub) => sub.name() !== 'help');
    if (subs.length) out.push('.PP', `Subcommands: ${subs.map((sub) => `\\fB${esc(sub.name())}\\fR`).join(', ')}.`);
    const args = help.visibleArguments(cmd).map((a): [string, string] => [`\\fI${esc(help.argumentTerm(a))}\\fR`, help.argumentDescription(a)]);
    const own = help.visibleOptions(cmd).filter((o) => !common.has(optionKey(o)) && !isHelp(o));
    const shared = help.visibleOptions(cmd).filter((o) => common.has(optionKey(o)));
    if (args.length || own.length) out.push('.RS 4', ...tagged([...args, ...own.map((o): [string, string] => [term(o.flags), help.optionDescription(o)])]), '.RE');
    if (shared.length) out.push('.PP', `Also takes the common options ${shared.map((o) => `\\fB${esc(o.long ?? o.flags)}\\fR`).join(', ')}.`);
    out.push(...example(commandExamples(cmd)));
  }
  out.push(
    '.SH COMMON OPTIONS',
    prose('Options that many commands take, with the same meaning everywhere:'),
    ...tagged([...seen].filter(([k]) => common.has(k)).map(([, v]) => [term(v.option.flags), commonText(v.option)])),
    '.SH ENVIRONMENT',
    ...tagged(ENVIRONMENT.map(([n, d]) => [`\\fB${esc(n)}\\fR`, d])),
    '.SH FILES',
    prose('The data directory is --data-dir DIR, else $ESTATE_DATA_DIR, else $XDG_DATA_HOME/estate (~/.local/share/estate). `estate init` creates a valid empty one there; `estate init DIR` another, which commands use when --data-dir DIR or $ESTATE_DATA_DIR names it. A new data dir has no API key: `estate keys create` makes one. A missing log reads as an empty list; a line that is not a JSON object, or not a record of its log (a field of the wrong type), is skipped and counted. Inside it:'),
    ...tagged(FILES.map(([n, d]) => [`\\fI${esc(n)}\\fR`, d])),
    '.PP',
    prose('Outside it, the user\'s contexts (estate context) and cache:'),
    ...tagged([
      [`\\fI${esc('$XDG_CONFIG_HOME/estate/contexts.json')}\\fR`, CONTEXTS_FILE_TEXT],
      [`\\fI${esc('$XDG_CACHE_HOME/estate/checked-config.json')}\\fR`, CHECKED_CONFIG_TEXT],
    ]),
    '.SH EXIT STATUS',
    ...tagged(EXIT_STATUS.map(([n, d]) => [`\\fB${n}\\fR`, d])),
    '.PP',
    prose('`estate pulse status` exits with the Nagios plugin codes of its answer: 0 healthy, 1 degraded, 2 unhealthy, 3 unknown. As the monitoring plugins do, any error of it (a bad option, an unreachable server, a refused credential, a missing data directory) exits 3 unknown instead of the codes above, with one line on standard error.'),
    '.SH EXAMPLES',
    '.nf',
    ...commandExamples(program).map((e) => esc(`$ ${e}`)),
    '.fi',
    '.SH SEE ALSO',
    prose('The HTTP API is described at /api/openapi.json of a running server, and browsable at /api/docs and /api/redoc; `estate openapi` prints the same document offline.'),
  );
  return `${out.join('\n')}\n`;
}
