import { z } from 'zod';
import type { JsonRecord } from '../../core/jsonl/parse-record.ts';
import { latestRecord, recentRecords } from '../../core/recent-records.ts';
import { SERIES_RECORDS } from '../../core/series-records.ts';
import { EstateError } from '../../errors.ts';
import { DATA_FILES } from '../../core/data-files.ts';
import { defineOperation } from '../define-operation.ts';
import { limitParam, page, seriesFields, storedRecord, storedTime } from '../schemas.ts';

const snapshot = storedRecord(
  { ts: storedTime('When the snapshot was taken', 'any').optional(), ...seriesFields(SERIES_RECORDS.disk) },
  'A disk snapshot, as stored.',
).meta({ id: 'DiskSnapshot' });

const mount = z.string().min(1).max(4096).optional().meta({ description: 'Only snapshots of this mount point.' });

function onMount(m: string | undefined): ((r: JsonRecord) => boolean) | undefined {
  return m === undefined ? undefined : (r) => r.mount === m;
}

export const diskList = defineOperation({
  id: 'disk.list',
  method: 'GET',
  path: '/disk',
  access: 'protected',
  tag: 'disk',
  summary: 'Disk snapshots from the disk snapshot log, newest first',
  description: 'The newest `limit` snapshots, of every mount or only of `mount`; lines that are not JSON objects, or not snapshots (a field of the wrong type), are skipped and counted in `skipped_lines`.',
  input: { query: z.object({ limit: limitParam(100, 1000, 'snapshots'), mount }) },
  output: page(snapshot, 'DiskSnapshotPage'),
  handler: ({ ctx, input }) => recentRecords(ctx.dataDir, 'disk', input.query.limit, onMount(input.query.mount)),
  cli: { command: 'disk', watch: [DATA_FILES.disk], columns: ['ts', 'mount', 'used_bytes', 'free_bytes', 'total_bytes'], examples: ['estate disk --mount / --limit 24'] },
});

export const diskLatest = defineOperation({
  id: 'disk.latest',
  method: 'GET',
  path: '/disk/latest',
  access: 'protected',
  tag: 'disk',
  summary: 'The most recent disk snapshot (of one mount, with `mount`)',
  description: 'The last snapshot of the disk log (of `mount` when given); 404 when there is none.',
  input: { query: z.object({ mount }) },
  output: snapshot,
  errors: [404],
  handler: async ({ ctx, input }) => {
    const latest = await latestRecord(ctx.dataDir, 'disk', onMount(input.query.mount));
    if (!latest) throw new EstateError('not_found', input.query.mount ? `no disk snapshot of ${input.query.mount} yet` : 'no disk snapshot yet');
    return latest;
  },
  cli: { command: 'disk latest', watch: [DATA_FILES.disk], examples: ['estate disk latest --mount /srv/models'] },
});
