import type { CommandShape, OptionShape } from './command-tree.ts';

// Shell completion scripts for bash, zsh and fish, written from the command
// tree (describeCommandTree, the walk the man page takes): subcommands at
// any depth, each command's options, the values of options that list them,
// directories and files for `<dir>` and `<file>` options, and positional
// arguments whose values estate lists at completion time by calling back
// `estate __complete SOURCE [--data-dir DIR]`.

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** Positional arguments whose values `estate __complete SOURCE` lists, by `command-words argument-name`. */
export const ARGUMENT_SOURCES: Readonly<Record<string, string>> = {
  'state file_name': 'state-files',
};

type ValueKind = { kind: 'dir' } | { kind: 'file' } | { kind: 'choices'; values: readonly string[] };

/** What completes the value of an option, if anything does. */
function valueKind(option: OptionShape): ValueKind | undefined {
  if (option.value === undefined) return undefined;
  if (option.choices?.length) return { kind: 'choices', values: option.choices };
  if (option.value === 'dir') return { kind: 'dir' };
  if (option.value === 'file') return { kind: 'file' };
  return undefined;
}

const flagsOf = (o: OptionShape): string[] => [o.short, o.long].filter((f): f is string => f !== undefined);
const keyOf = (c: CommandShape): string => c.words.join(' ');
const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();
/** What completes a command's first positional argument: the values it lists, or the source `__complete` lists them from. */
function firstArgument(c: CommandShape): { choices: readonly string[] } | { source: string } | undefined {
  const arg = c.arguments[0];
  if (!arg) return undefined;
  const source = ARGUMENT_SOURCES[`${keyOf(c)} ${arg.name}`];
  if (source) return { source };
  return arg.choices?.length ? { choices: arg.choices } : undefined;
}

/** The completion script for `shell`, for a program named `name`. */
export function completionScript(shell: Shell, tree: readonly CommandShape[], name: string): string {
  if (shell === 'bash') return bashScript(tree, name);
  if (shell === 'zsh') return zshScript(tree, name);
  return fishScript(tree, name);
}

/** A POSIX single-quoted word (bash, zsh). */
const sq = (text: string): string => `'${text.replace(/'/g, `'\\''`)}'`;

/** `case` arms, one per text printed, for the keys that print it (a key starting with `*` is a glob); empty texts left out. */
function caseArms(entries: [string, string][]): string[] {
  const byBody = new Map<string, string[]>();
  for (const [key, body] of entries) {
    if (!body) continue;
    byBody.set(body, [...(byBody.get(body) ?? []), key]);
  }
  return [...byBody].map(([body, keys]) => `    ${keys.map((k) => (k.startsWith('*') ? `*${sq(k.slice(1))}` : sq(k))).join('|')}) ${body} ;;`);
}

/** `echo 'choices a b'` or `echo 'source state-files'`. */
function argumentBody(arg: ReturnType<typeof firstArgument>): string {
  if (!arg) return '';
  return `echo ${sq('source' in arg ? `source ${arg.source}` : `choices ${arg.choices.join(' ')}`)}`;
}

/** The lookup functions bash and zsh share: subcommands, options, options taking a value, their values, argument sources. */
function posixLookups(tree: readonly CommandShape[], fn: string, withDescriptions: boolean): string[] {
  const fnCase = (suffix: string, args: string, arms: string[]) => [`${fn}_${suffix}() {`, `  case ${args} in`, ...arms, '  esac', '}', ''];
  const described = (name: string, description: string) => (withDescriptions ? `${name}:${oneLine(description)}` : name);
  const print = (words: string[]) => (words.length ? `printf '%s\\n' ${words.map(sq).join(' ')}` : '');
  // By command and flag; a flag that completes the same way wherever it is taken is one `*|--flag` arm.
  const byFlag = new Map<string, [string, string][]>();
  for (const c of tree) {
    for (const o of c.options) {
      if (o.value === undefined) continue;
      const kind = valueKind(o);
      const body = !kind ? '' : kind.kind === 'choices' ? `echo ${sq(`choices ${kind.values.join(' ')}`)}` : `echo ${kind.kind}`;
      for (const flag of flagsOf(o)) byFlag.set(flag, [...(byFlag.get(flag) ?? []), [`${keyOf(c)}|${flag}`, body]]);
    }
  }
  const values = [...byFlag].flatMap(([flag, arms]): [string, string][] => (new Set(arms.map(([, body]) => body)).size === 1 ? [[`*|${flag}`, arms[0]?.[1] ?? '']] : arms));
  return [
    ...fnCase('subcommands', '"$1"', caseArms(tree.map((c) => [keyOf(c), print(c.subcommands.map((s) => described(s.name, s.description)))]))),
    ...fnCase('options', '"$1"', caseArms(tree.map((c) => [keyOf(c), print(c.options.flatMap((o) => flagsOf(o).map((f) => described(f, o.description))))]))),
    ...fnCase('value_options', '"$1"', caseArms(tree.map((c) => [keyOf(c), print(c.options.filter((o) => o.value !== undefined).flatMap(flagsOf))]))),
    ...fnCase('option_values', '"$1|$2"', caseArms(values)),
    ...fnCase('argument', '"$1"', caseArms(tree.map((c) => [keyOf(c), argumentBody(firstArgument(c))]))),
  ];
}

function bashScript(tree: readonly CommandShape[], name: string): string {
  const fn = `_${name}_completion`;
  const main = [
    '_FN__has() {',
    '  local word=$1 each',
    '  shift',
    '  for each; do [[ $each == "$word" ]] && return 0; done',
    '  return 1',
    '}',
    '',
    '# COMPREPLY from the lines of stdin (file names may hold spaces).',
    '_FN__reply() {',
    '  local line',
    '  COMPREPLY=()',
    '  while IFS= read -r line; do [[ -n $line ]] && COMPREPLY+=("$line"); done',
    '}',
    '',
    '_FN__fn() {',
    "  local cur=${COMP_WORDS[COMP_CWORD]} cmdpath='' data_dir='' value_of='' word src candidates kind",
    '  local i=1 npos=0',
    '  while (( i < COMP_CWORD )); do',
    '    word=${COMP_WORDS[i]}',
    '    if [[ $word == --data-dir=* ]]; then',
    '      data_dir=${word#--data-dir=}',
    '    elif [[ $word == -* ]]; then',
    '      # --data-dir takes a value wherever it stands (state file names are read from it).',
    '      if [[ $word == --data-dir ]] || _FN__has "$word" $(_FN__value_options "$cmdpath"); then',
    '        # bash splits --option=value at "=": skip the "=".',
    '        [[ ${COMP_WORDS[i+1]} == = ]] && i=$((i + 1))',
    '        if (( i + 1 >= COMP_CWORD )); then',
    '          value_of=$word',
    '        elif [[ $word == --data-dir ]]; then',
    '          data_dir=${COMP_WORDS[i+1]}',
    '        fi',
    '        i=$((i + 1))',
    '      fi',
    '    elif (( npos == 0 )) && _FN__has "$word" $(_FN__subcommands "$cmdpath"); then',
    '      cmdpath=${cmdpath:+$cmdpath }$word',
    '    else',
    '      npos=$((npos + 1))',
    '    fi',
    '    i=$((i + 1))',
    '  done',
    "  [[ $cur == = ]] && cur=''",
    '  COMPREPLY=()',
    '  if [[ -n $value_of ]]; then',
    '    kind=$(_FN__option_values "$cmdpath" "$value_of")',
    '    [[ $value_of == --data-dir ]] && kind=dir',
    '    case $kind in',
    '      dir) compopt -o filenames 2>/dev/null; _FN__reply < <(compgen -d -- "$cur") ;;',
    '      file) compopt -o filenames 2>/dev/null; _FN__reply < <(compgen -f -- "$cur") ;;',
    '      choices\\ *) _FN__reply < <(compgen -W "${kind#choices }" -- "$cur") ;;',
    '    esac',
    '    return 0',
    '  fi',
    '  if [[ $cur == -* ]]; then',
    '    _FN__reply < <(compgen -W "$(_FN__options "$cmdpath")" -- "$cur")',
    '    return 0',
    '  fi',
    '  (( npos == 0 )) || return 0',
    '  candidates=$(_FN__subcommands "$cmdpath")',
    '  src=$(_FN__argument "$cmdpath")',
    '  case $src in',
    '    choices\\ *) candidates+=" ${src#choices }" ;;',
    '    source\\ *)',
    '      data_dir=${data_dir/#\\~/$HOME}',
    "      candidates+=$'\\n'$(\"${COMP_WORDS[0]}\" __complete \"${src#source }\" ${data_dir:+--data-dir \"$data_dir\"} 2>/dev/null) ;;",
    '  esac',
    '  _FN__reply < <(compgen -W "$candidates" -- "$cur")',
    '}',
    '',
    '_FN__NAME_',
  ];
  return [
    `# bash completion for ${name}, generated by \`${name} completion bash\` from its command tree.`,
    `# Load it in this shell with: source <(${name} completion bash)`,
    `# or for every shell: ${name} completion bash > ~/.local/share/bash-completion/completions/${name}`,
    '',
    ...posixLookups(tree, fn, false),
    ...main.map((line) => line.replace('_FN__NAME_', `complete -F ${fn}_fn ${name}`).replaceAll('_FN_', fn)),
    '',
  ].join('\n');
}

function zshScript(tree: readonly CommandShape[], name: string): string {
  const fn = `_${name}_completion`;
  const main = [
    '_NAME_() {',
    "  local cur=${words[CURRENT]} cmdpath='' data_dir='' value_of='' word src kind",
    '  local -i i=2 npos=0',
    '  local -a names cmds opts',
    '  while (( i < CURRENT )); do',
    '    word=${words[i]}',
    '    if [[ $word == --data-dir=* ]]; then',
    '      data_dir=${word#--data-dir=}',
    '    elif [[ $word == -* ]]; then',
    '      names=(${(f)"$(_FN__value_options "$cmdpath")"})',
    '      # --data-dir takes a value wherever it stands (state file names are read from it).',
    '      if [[ $word == --data-dir ]] || (( ${names[(Ie)$word]} )); then',
    '        if (( i + 1 == CURRENT )); then',
    '          value_of=$word',
    '        elif [[ $word == --data-dir ]]; then',
    '          data_dir=${words[i+1]}',
    '        fi',
    '        (( i++ ))',
    '      fi',
    '    else',
    '      names=(${${(f)"$(_FN__subcommands "$cmdpath")"}%%:*})',
    '      if (( npos == 0 && ${names[(Ie)$word]} )); then',
    '        cmdpath=${cmdpath:+$cmdpath }$word',
    '      else',
    '        (( npos++ ))',
    '      fi',
    '    fi',
    '    (( i++ ))',
    '  done',
    '  if [[ -z $value_of && $cur == --*=* ]]; then',
    '    value_of=${cur%%=*}',
    "    compset -P '*='",
    '  fi',
    '  if [[ -n $value_of ]]; then',
    '    kind=$(_FN__option_values "$cmdpath" "$value_of")',
    '    [[ $value_of == --data-dir ]] && kind=dir',
    '    case $kind in',
    '      dir) _files -/ ;;',
    '      file) _files ;;',
    '      choices\\ *) compadd -- ${=${kind#choices }} ;;',
    '    esac',
    '    return',
    '  fi',
    '  if [[ $cur == -* ]]; then',
    '    opts=(${(f)"$(_FN__options "$cmdpath")"})',
    "    _describe -t options 'option' opts",
    '    return',
    '  fi',
    '  (( npos == 0 )) || return',
    '  cmds=(${(f)"$(_FN__subcommands "$cmdpath")"})',
    "  (( ${#cmds} )) && _describe -t commands 'command' cmds",
    '  src=$(_FN__argument "$cmdpath")',
    '  case $src in',
    '    choices\\ *) compadd -- ${=${src#choices }} ;;',
    '    source\\ *)',
    '      data_dir=${data_dir/#\\~/$HOME}',
    '      names=(${(f)"$(${words[1]} __complete ${src#source } ${data_dir:+--data-dir} ${data_dir:+$data_dir} 2>/dev/null)"})',
    '      (( ${#names} )) && compadd -- $names ;;',
    '  esac',
    '}',
    '',
    'if [[ ${funcstack[1]} == _NAME_ ]]; then',
    '  _NAME_ "$@"',
    'elif (( $+functions[compdef] )); then',
    '  compdef _NAME_ _PROG_',
    'else',
    "  print -u2 '_PROG_: zsh completion needs compinit first: autoload -Uz compinit && compinit'",
    'fi',
  ];
  return [
    `#compdef ${name}`,
    `# zsh completion for ${name}, generated by \`${name} completion zsh\` from its command tree.`,
    `# Load it in this shell with: source <(${name} completion zsh)   (after compinit)`,
    `# or for every shell: ${name} completion zsh > "\${fpath[1]}/_${name}"`,
    '',
    ...posixLookups(tree, fn, true),
    ...main.map((line) => line.replaceAll('_FN_', fn).replaceAll('_NAME_', `_${name}`).replaceAll('_PROG_', name)),
    '',
  ].join('\n');
}

/** A fish single-quoted word. */
const fq = (text: string): string => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function fishScript(tree: readonly CommandShape[], name: string): string {
  const fn = `__${name}_completion`;
  const switchFn = (suffix: string, lines: (c: CommandShape) => string[]) => [
    `function ${fn}_${suffix}`,
    '    switch "$argv[1]"',
    ...tree.flatMap((c) => {
      const words = lines(c);
      return words.length ? [`        case ${fq(keyOf(c))}`, `            printf '%s\\n' ${words.map(fq).join(' ')}`] : [];
    }),
    '    end',
    'end',
    '',
  ];
  const rules: string[] = [];
  for (const c of tree) {
    const at = `-n ${fq(`${fn}_at ${fq(keyOf(c))}`)}`;
    for (const s of c.subcommands) rules.push(`complete -c ${name} ${at} -a ${fq(s.name)} -d ${fq(oneLine(s.description))}`);
    for (const o of c.options) {
      const flags = [o.short ? `-s ${o.short.slice(1)}` : '', o.long ? `-l ${o.long.slice(2)}` : ''].filter(Boolean).join(' ');
      const kind = valueKind(o);
      let value = '';
      if (o.value !== undefined) {
        if (o.long === '--data-dir') value = ` -x -a ${fq('(__fish_complete_directories (commandline -ct))')}`;
        else if (kind?.kind === 'choices') value = ` -x -a ${fq(kind.values.join(' '))}`;
        else if (kind?.kind === 'dir') value = ` -x -a ${fq('(__fish_complete_directories (commandline -ct))')}`;
        else if (kind?.kind === 'file') value = ' -r -F';
        else value = ' -x';
      }
      rules.push(`complete -c ${name} ${at} ${flags}${value} -d ${fq(oneLine(o.description))}`);
    }
    const arg = firstArgument(c);
    const values = !arg ? undefined : 'source' in arg ? `(${fn}_values ${arg.source})` : arg.choices.join(' ');
    if (values) rules.push(`complete -c ${name} -n ${fq(`${fn}_at ${fq(keyOf(c))}; and test (${fn}_positionals) -eq 0`)} -a ${fq(values)}`);
  }
  return [
    `# fish completion for ${name}, generated by \`${name} completion fish\` from its command tree.`,
    `# Load it in this shell with: ${name} completion fish | source`,
    `# or for every shell: ${name} completion fish > ~/.config/fish/completions/${name}.fish`,
    '',
    ...switchFn('subcommands', (c) => c.subcommands.map((s) => s.name)),
    ...switchFn('value_options', (c) => c.options.filter((o) => o.value !== undefined).flatMap(flagsOf)),
    '# The command words typed so far ("work complete"), then how many positional arguments follow them.',
    `function ${fn}_walk`,
    '    set -l tokens (commandline -opc)',
    '    set -e tokens[1]',
    '    set -l cmdpath',
    '    set -l npos 0',
    '    set -l skip 0',
    '    for token in $tokens',
    '        if test $skip -eq 1',
    '            set skip 0',
    '        else if string match -q -- \'-*\' $token',
    `            if test $token = --data-dir; or contains -- $token (${fn}_value_options (string join ' ' -- $cmdpath))`,
    '                set skip 1',
    '            end',
    `        else if test $npos -eq 0; and contains -- $token (${fn}_subcommands (string join ' ' -- $cmdpath))`,
    '            set -a cmdpath $token',
    '        else',
    '            set npos (math $npos + 1)',
    '        end',
    '    end',
    "    echo (string join ' ' -- $cmdpath)",
    '    echo $npos',
    'end',
    '',
    `function ${fn}_at`,
    `    set -l walk (${fn}_walk)`,
    '    test "$walk[1]" = "$argv[1]"',
    'end',
    '',
    `function ${fn}_positionals`,
    `    set -l walk (${fn}_walk)`,
    '    echo $walk[2]',
    'end',
    '',
    `# What \`${name} __complete SOURCE\` lists, with the --data-dir typed so far.`,
    `function ${fn}_values`,
    '    set -l tokens (commandline -opc)',
    '    set -l dir',
    '    for i in (seq 2 (count $tokens))',
    '        switch $tokens[$i]',
    "            case '--data-dir=*'",
    "                set dir (string replace -- '--data-dir=' '' $tokens[$i])",
    '            case --data-dir',
    '                if test $i -lt (count $tokens)',
    '                    set dir $tokens[(math $i + 1)]',
    '                end',
    '        end',
    '    end',
    '    if test -n "$dir"',
    "        $tokens[1] __complete $argv[1] --data-dir (string replace -r -- '^~' $HOME $dir) 2>/dev/null",
    '    else',
    '        $tokens[1] __complete $argv[1] 2>/dev/null',
    '    end',
    'end',
    '',
    `complete -c ${name} -f`,
    ...rules,
    '',
  ].join('\n');
}
