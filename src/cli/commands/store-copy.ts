import { realpathSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { assertDataDir, defaultConfig } from '../../config.ts';
import { COPY_KINDS, copyStore, LISTED_CONFLICTS, type CopyConflict, type CopyReport } from '../../core/store/copy-store.ts';
import { describeStoreUrl, isPostgresSpec, openStore } from '../../core/store/open-store.ts';
import type { Store } from '../../core/store/store.ts';
import { EstateError } from '../../errors.ts';
import { ExitStatus } from '../exit-status.ts';
import type { CliIO } from '../io.ts';
import { escapeControls } from '../safe-text.ts';

interface CopyOptions {
  from: string;
  to: string;
  json?: boolean;
}

/** A store named on the command line: a data dir's path, or a postgres:// URL. */
interface NamedStore {
  store: Store;
  /** As shown: the data dir's absolute path, or the URL without its password. */
  name: string;
  /** What two names of one store share (the real path; the URL as shown). */
  identity: string;
}

function openNamed(spec: string, option: string, env: NodeJS.ProcessEnv): NamedStore {
  if (isPostgresSpec(spec)) {
    const name = describeStoreUrl(spec);
    // A PostgreSQL store reads only `env` (the password); the data dir is not used.
    return { store: openStore(spec, { dataDir: path.resolve('.'), config: defaultConfig(), env }), name, identity: name };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(spec)) {
    throw new EstateError('usage', `${option}: invalid store "${describeStoreUrl(spec)}": use a data directory or a postgres:// URL`);
  }
  const dir = path.resolve(spec);
  assertDataDir(dir, env);
  return { store: openStore(undefined, { dataDir: dir, config: defaultConfig(), env }), name: dir, identity: realpathSync(dir) };
}

function countsLine(kind: string, c: CopyReport[keyof Omit<CopyReport, 'conflicts'>]): string {
  const parts = [`${c.copied} copied`, `${c.already_there} already there`];
  if (c.updated > 0) parts.push(`${c.updated} updated`);
  parts.push(`${c.conflicts} conflict${c.conflicts === 1 ? '' : 's'}`);
  if (c.skipped > 0) parts.push(`${c.skipped} skipped (not records)`);
  return `${`${kind}:`.padEnd(15)}${parts.join(', ')}`;
}

function conflictLine(c: CopyConflict): string {
  const key = c.key ? ` (${Object.entries(c.key).map(([k, v]) => `${k} ${v}`).join(', ')})` : '';
  return `conflict: ${c.kind} ${c.id}${key}: the destination holds another one (${c.differing.join(', ')} differ); left as it is`;
}

export function storeCommand(io: CliIO): Command {
  const store = new Command('store').description('Work on the store of what estate writes (the data dir, or a PostgreSQL database)');
  const copy = new Command('copy')
    .description('Copy everything estate wrote from one store to another (data dir or PostgreSQL, either way), keeping ids, times and order; safe to run again')
    .requiredOption('--from <store>', 'The store to copy from: a data directory, or a postgres:// URL')
    .requiredOption('--to <store>', 'The store to copy to: a data directory (create it with estate init), or a migrated postgres:// URL')
    .option('--json', 'Also print the counts of each kind and the conflicts as JSON on stdout')
    .addHelpText(
      'after',
      `
It copies work completions and published entries (with their ids, times and
order), training runs, API keys (hashes, scopes, expiry, revocation, last use:
existing keys keep working), the token secret (existing tokens keep
verifying), and the series: trend points, disk snapshots and pulse entries
(each once by its node and ts, oldest first), the heartbeat (when the
destination has none), the provider probes (each once by provider and
ts) and the webhook outbox (each delivery once by its webhook-id, with its
attempts). A summary per kind goes to stderr.

Run it again at will: what the destination holds already is skipped; a record
whose id or key holds something else there is a conflict, reported and never
overwritten. A key revoked at the source since an earlier copy is revoked at
the destination too. Nothing is deleted at the destination.

A PostgreSQL destination must be migrated first (estate migrate --store URL).
The password of a postgres:// URL may come from PGPASSWORD or a PGPASSFILE.

Exit status: 0 copied, 5 conflicts (everything else copied), 1 a store failed
(run it again), 2 invalid usage.

Examples:
  $ estate store copy --from ~/.local/share/estate --to postgres://estate@db.internal/estate
  $ estate store copy --from postgres://estate@db.internal/estate --to /srv/estate --json
`,
    )
    .action(async (options: CopyOptions) => {
      const from = openNamed(options.from, '--from', io.env);
      let to: NamedStore;
      try {
        to = openNamed(options.to, '--to', io.env);
      } catch (err) {
        await from.store.close();
        throw err;
      }
      let report: CopyReport;
      try {
        if (from.identity === to.identity) throw new EstateError('usage', `--from and --to name the same store (${from.name})`);
        let shown = 0;
        report = await copyStore(from.store, to.store, {
          onConflict: (c) => {
            if (shown++ < LISTED_CONFLICTS) io.stderr(`${escapeControls(conflictLine(c))}\n`);
          },
        });
      } finally {
        await Promise.all([from.store.close(), to.store.close()]);
      }
      for (const kind of COPY_KINDS) io.stderr(`${countsLine(kind, report[kind])}\n`);
      const conflicts = COPY_KINDS.reduce((n, kind) => n + report[kind].conflicts, 0);
      if (conflicts > LISTED_CONFLICTS) io.stderr(`(the first ${LISTED_CONFLICTS} conflicts are listed above)\n`);
      if (options.json) io.stdout(`${JSON.stringify({ from: from.name, to: to.name, ...report }, null, 2)}\n`);
      if (conflicts > 0) {
        io.stderr(`estate: ${conflicts} conflict${conflicts === 1 ? '' : 's'}: nothing was overwritten; everything else is copied from ${escapeControls(from.name)} to ${escapeControls(to.name)}\n`);
        throw new ExitStatus(5);
      }
      io.stderr(`copied ${escapeControls(from.name)} to ${escapeControls(to.name)}\n`);
    });
  return store.addCommand(copy);
}
