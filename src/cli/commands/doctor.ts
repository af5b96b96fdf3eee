import { Command } from 'commander';
import { resolveDataDir } from '../../config.ts';
import { runDoctor, type DoctorCheck } from '../../core/doctor.ts';
import { EstateError } from '../../errors.ts';
import { addDataDirOptions } from '../common-options.ts';
import type { CliIO } from '../io.ts';
import { startProgress } from '../progress.ts';

const LABEL: Record<DoctorCheck['status'], string> = { ok: 'ok', warn: 'WARN', fail: 'FAIL', skip: 'skip' };

/** `estate doctor`: checks the data dir, the config, the forge and each provider; exit 1 when one fails. */
export function doctorCommand(io: CliIO): Command {
  const cmd = new Command('doctor')
    .description('Check the data dir, the config, the forge and each provider, and say how to fix what is wrong')
    .option('--json', 'print the checks as JSON: {"ok": bool, "checks": [{name, status, detail, fix}]}');
  addDataDirOptions(cmd);
  cmd.addHelpText('after', '\nExit status: 0 when every check passes (warnings allowed), 1 when one fails.\n\nExamples:\n  $ estate doctor\n  $ estate doctor --data-dir /var/lib/estate --json\n');
  cmd.action(async (options: { dataDir?: string; config?: string; json?: boolean }) => {
    const dataDir = resolveDataDir(options.dataDir, io.env);
    const stop = startProgress(io, 'checking the estate…');
    let checks: DoctorCheck[];
    try {
      checks = await runDoctor({ dataDir, configFile: options.config, env: io.env });
    } finally {
      stop();
    }
    const failed = checks.filter((c) => c.status === 'fail');
    if (options.json) io.stdout(`${JSON.stringify({ ok: failed.length === 0, checks }, null, 2)}\n`);
    else io.stdout(formatChecks(checks));
    if (failed.length) throw new EstateError('unavailable', `doctor: ${failed.length} of ${checks.length} checks failed`);
  });
  return cmd;
}

/** One line per check (`ok    config  …`), with an indented `fix:` line under each problem. */
export function formatChecks(checks: readonly DoctorCheck[]): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  return checks
    .map((c) => {
      const line = `${LABEL[c.status].padEnd(4)}  ${c.name.padEnd(width)}  ${c.detail}`;
      return c.fix ? `${line}\n${' '.repeat(6)}fix: ${c.fix}` : line;
    })
    .map((l) => `${l}\n`)
    .join('');
}
