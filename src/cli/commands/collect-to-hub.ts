import { mkdir } from 'node:fs/promises';
import type { CollectorSettings } from '../../core/collect/collect-loop.ts';
import type { HubTarget } from '../../core/collect/send/post-samples.ts';
import type { SendReport } from '../../core/collect/send/send-spool.ts';
import type { SpooledSample } from '../../core/collect/send/spool-sample.ts';
import { EstateError } from '../../errors.ts';
import type { CliIO } from '../io.ts';
import { escapeControls } from '../safe-text.ts';
import { keepCollectorLight } from '../collector-v8-settings.ts';

export interface HubRun {
  target: HubTarget;
  settings: CollectorSettings;
  once: boolean;
  json: boolean;
}

/**
 * `estate collect --url HUB`: each sample goes to the spool in the data
 * dir (created on first use: a node that only sends needs no `estate
 * init`), and the spool to the hub's `POST /ingest`. With `--once` the
 * spool is sent once: a hub that cannot take it now (unreachable, 429,
 * 5xx, another sender busy) is one line on stderr and exit 0, the samples
 * waiting for the next run; a refused key exits 4. Without it, a sender
 * runs beside the sampling until SIGTERM/SIGINT (hub-sender.ts).
 */
export async function collectToHub(io: CliIO, run: HubRun): Promise<void> {
  const { target, settings } = run;
  await mkdir(settings.dataDir, { recursive: true, mode: 0o700 });
  const [{ SampleSpool }, { spoolSample, spoolSampler }, { sendSpool }, { startHubSender }, { sampleEvery }] = await Promise.all([
    import('../../core/collect/send/sample-spool.ts'),
    import('../../core/collect/send/spool-sample.ts'),
    import('../../core/collect/send/send-spool.ts'),
    import('../../core/collect/send/hub-sender.ts'),
    import('../../core/collect/collect-loop.ts'),
  ]);
  const { intervalMs, retentionMs: _r, spoolMaxBytes, ...options } = settings;
  const spool = new SampleSpool(settings.dataDir, settings.node, spoolMaxBytes);
  const say = (line: string) => io.stderr(`estate collect: ${escapeControls(line)}\n`);
  const samples = (n: number) => `${n} oldest unsent sample${n === 1 ? '' : 's'}`;
  // A full spool drops a sample per sample while the hub is away: said at the first drop, and in all once the hub takes samples again.
  let droppedSinceSaid = 0;
  const print = (spooled: SpooledSample) => {
    if (spooled.dropped > 0 && (run.once || droppedSinceSaid === 0)) {
      say(`the spool is over collect.spool_max_bytes (${spoolMaxBytes} bytes): dropped the ${samples(spooled.dropped)}${run.once ? '' : ' (more are dropped while the hub cannot take them: said in all once it does)'}`);
    }
    droppedSinceSaid += spooled.dropped;
    if (run.json) {
      const { dropped, ...rest } = spooled;
      const out = { ...rest, spool_dropped: dropped };
      io.stdout(`${run.once ? JSON.stringify(out, null, 2) : JSON.stringify(out)}\n`);
    } else {
      const missing = spooled.missing.length ? `; not read: ${spooled.missing.join(', ')}` : '';
      const disks = `${spooled.disks.length} disk snapshot${spooled.disks.length === 1 ? '' : 's'}`;
      io.stdout(escapeControls(`${spooled.trend.ts} ${settings.node}: ${spooled.pulse.status}; 1 trend point, ${disks}, 1 pulse entry, spooled for ${target.url}${missing}`) + '\n');
    }
  };
  const sayDropped = (report: SendReport) => {
    if (report.unreadable > 0) say(`${report.unreadable} line${report.unreadable === 1 ? '' : 's'} of the spool that ${report.unreadable === 1 ? 'was' : 'were'} not a sample (a torn write) skipped`);
    if (report.refused.length === 0) return;
    const [first] = report.refused;
    const more = report.refused.length > 1 ? ` (and ${report.refused.length - 1} more)` : '';
    say(`the hub refused the sample of ${first!.ts}${more}: ${first!.reason}; dropped from the spool`);
  };

  if (run.once) {
    print(await spoolSample(spool, options));
    const report = await sendSpool(spool, target);
    sayDropped(report);
    if (report.outcome === 'drained') return;
    const waiting = `the samples wait in the spool (${await spool.pendingBytes()} bytes) for the next run`;
    if (report.outcome === 'denied') {
      throw new EstateError(report.status === 401 || report.status === 403 ? 'forbidden' : 'io', `${report.message}; ${waiting}`);
    }
    say(`${report.message ?? report.outcome}; ${waiting}`);
    return;
  }

  keepCollectorLight(process.execArgv, io.env.NODE_OPTIONS);
  const stopping = new AbortController();
  void io.onStop().then(() => stopping.abort());
  // One line when the hub stops taking samples (or says why another way), one when it takes them again.
  let trouble: string | undefined;
  const sender = startHubSender(spool, target, stopping.signal, {
    sent: (report) => {
      sayDropped(report);
      if (report.outcome === 'drained') {
        if (trouble !== undefined) say(`${target.url} takes samples again: ${report.sent} sent (${report.duplicates} it had already)`);
        if (droppedSinceSaid > 0) say(`in all, the full spool dropped the ${samples(droppedSinceSaid)} while the hub could not take them`);
        droppedSinceSaid = 0;
        trouble = undefined;
        return;
      }
      const line = `${report.message ?? report.outcome}; samples wait in the spool, retrying`;
      if (line !== trouble) say(line);
      trouble = line;
    },
    failed: (err) => say((err as Error).message),
  });
  try {
    await sampleEvery(spoolSampler(spool, options), intervalMs, stopping.signal, {
      sampled: (spooled) => {
        print(spooled);
        sender.wake();
      },
      failed: (err) => say((err as Error).message),
    });
  } finally {
    stopping.abort();
    await sender.done;
  }
}
