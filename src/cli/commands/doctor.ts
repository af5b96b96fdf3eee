import { Command } from 'commander';
import { envSettings, resolveDataDir } from '../../config.ts';
import { runDoctor, type DoctorCheck } from '../../core/doctor.ts';
import { EstateError } from '../../errors.ts';
import { VERSION } from '../../version.ts';
import { addDataDirOptions } from '../common-options.ts';
import { remoteTarget } from '../local-context.ts';
import type { CliIO } from '../io.ts';
import { terminalWidth } from '../output/terminal-width.ts';
import { hangingLine } from '../output/wrap-words.ts';
import { startProgress } from '../progress.ts';
import { escapeControls } from '../safe-text.ts';

const LABEL: Record<DoctorCheck['status'], string> = { ok: 'ok', warn: 'WARN', fail: 'FAIL', skip: 'skip' };
/** SGR colours of the labels on a terminal: FAIL red, WARN yellow, ok green. */
const COLOUR: Partial<Record<DoctorCheck['status'], string>> = { fail: '\x1b[31m', warn: '\x1b[33m', ok: '\x1b[32m' };

interface DoctorOptions {
  dataDir?: string;
  config?: string;
  json?: boolean;
  url?: string;
  apiKey?: string;
  context?: string;
  store?: string;
}

/** `estate doctor`: checks the data dir, the config, the store and its keys, the forge and each provider, or with `--url` a running server; exit 1 when one fails. */
export function doctorCommand(io: CliIO): Command {
  const cmd = new Command('doctor')
    .description('Check the data dir, the config, the store and its API keys, the forge and each provider (or, with --url, a running server), and say how to fix what is wrong')
    .option('--json', 'print the checks as JSON: {"ok": bool, "checks": [{name, status, detail, fix}]}')
    .option('--url <url>', 'check this estate server instead: reachable, ready, its version, the API key (default: $ESTATE_URL)')
    .option('--api-key <key>', 'credential to check with --url (default: $ESTATE_API_KEY)')
    .option('--context <name>', 'check the server of this context (see estate context; default: $ESTATE_CONTEXT, else the current one)');
  addDataDirOptions(cmd);
  cmd.addHelpText(
    'after',
    '\nExit status: 0 when every check passes (warnings allowed), 1 when one fails.\n\nExamples:\n  $ estate doctor\n  $ estate doctor --data-dir /var/lib/estate --json\n  $ estate doctor --url http://hub:8080 --api-key "$KEY"\n',
  );
  cmd.action(async (options: DoctorOptions) => {
    // Where to look is decided as for every command (flags, environment, contexts): see resolveTarget.
    const target = remoteTarget(options, io);
    const stop = startProgress(io, target ? `checking ${target.url}…` : 'checking the estate…');
    let checks: DoctorCheck[];
    try {
      if (target) {
        const { checkRemote } = await import('../remote-doctor.ts');
        checks = await checkRemote({ ...target, timeoutMs: target.timeoutMs ?? 10_000 }, VERSION);
      } else {
        checks = await runDoctor({ dataDir: resolveDataDir(options.dataDir, io.env), configFile: options.config, env: io.env, store: options.store });
      }
    } finally {
      stop();
    }
    const failed = checks.filter((c) => c.status === 'fail');
    if (options.json) io.stdout(`${JSON.stringify({ ok: failed.length === 0, checks }, null, 2)}\n`);
    else io.stdout(formatChecks(checks, io.isTTY && !envSettings(io.env).noColor, io.isTTY ? terminalWidth(io) : undefined));
    if (failed.length) throw new EstateError('unavailable', `doctor: ${failed.length} of ${checks.length} checks failed`);
  });
  return cmd;
}

/**
 * One line per check (`ok    config  …`), with an indented `fix:` line under
 * each problem; what the checks quote is escaped. With `colour`, the FAIL,
 * WARN and ok labels are coloured. With a `width` (a terminal's), a long
 * detail or fix wraps between words, under where its text began.
 */
export function formatChecks(checks: readonly DoctorCheck[], colour = false, width?: number): string {
  const nameWidth = Math.max(...checks.map((c) => c.name.length));
  return checks
    .map((c) => {
      const label = LABEL[c.status];
      const line = hangingLine(`${label.padEnd(4)}  ${escapeControls(c.name.padEnd(nameWidth))}  `, escapeControls(c.detail), width);
      const sgr = colour ? COLOUR[c.status] : undefined;
      const painted = sgr ? `${sgr}${label}\x1b[0m${line.slice(label.length)}` : line;
      return c.fix ? `${painted}\n${hangingLine(`${' '.repeat(6)}fix: `, escapeControls(c.fix), width)}` : painted;
    })
    .map((l) => `${l}\n`)
    .join('');
}
