import { z } from 'zod';
import { SERIES_RECORDS } from '../../core/series-records.ts';
import { EstateError } from '../../errors.ts';
import { DATA_FILES } from '../../core/data-files.ts';
import { defineOperation } from '../define-operation.ts';
import { limitParam, nodeParam, page, seriesFields, storedRecord, storedTime } from '../schemas.ts';

const snapshot = storedRecord(
  { ts: storedTime('When the snapshot was taken', 'any').optional(), ...seriesFields(SERIES_RECORDS.disk) },
  'A disk snapshot, as stored.',
).meta({ id: 'DiskSnapshot' });

const mount = z.string().min(1).max(4096).optional().meta({ description: 'Only snapshots of this mount point.' });

const node = nodeParam('snapshots');

export const diskList = defineOperation({
  id: 'disk.list',
  method: 'GET',
  path: '/disk',
  access: 'protected',
  tag: 'disk',
  summary: 'Disk snapshots from the disk snapshot log, newest first',
  description: 'The newest `limit` snapshots, of every node and mount (newest first, as written), or only of `node`, of `mount`, or of both; lines that are not JSON objects, or not snapshots (a field of the wrong type), are skipped and counted in `skipped_lines`.',
  input: { query: z.object({ limit: limitParam(100, 1000, 'snapshots'), node, mount }) },
  output: page(snapshot, 'DiskSnapshotPage'),
  handler: ({ ctx, input }) => ctx.store.series.newest('disk', input.query.limit, { node: input.query.node, mount: input.query.mount }),
  cli: { command: 'disk', watch: [DATA_FILES.disk], columns: ['ts', 'mount', 'used_bytes', 'free_bytes', 'total_bytes'], examples: ['estate disk --mount / --limit 24', 'estate disk --node web-1 --mount /'] },
});

export const diskLatest = defineOperation({
  id: 'disk.latest',
  method: 'GET',
  path: '/disk/latest',
  access: 'protected',
  tag: 'disk',
  summary: 'The most recent disk snapshot (of one node or mount, with `node` or `mount`)',
  description: 'The newest disk snapshot (of `node` and of `mount` when given); 404 when there is none.',
  input: { query: z.object({ node, mount }) },
  output: snapshot,
  errors: [404],
  handler: async ({ ctx, input }) => {
    const { node: of, mount: on } = input.query;
    const [latest] = (await ctx.store.series.newest('disk', 1, { node: of, mount: on })).items;
    if (!latest) throw new EstateError('not_found', `no disk snapshot${on === undefined ? '' : ` of ${on}`}${of === undefined ? '' : ` on ${of}`} yet`);
    return latest;
  },
  cli: { command: 'disk latest', watch: [DATA_FILES.disk], examples: ['estate disk latest --mount /srv/models'] },
});
