import { z } from 'zod';
import { checkSamples } from '../../core/hub/check-samples.ts';
import { MAX_NODE_NAME } from '../../core/hub/node-name.ts';
import type { SeriesSample } from '../../core/store/store.ts';
import { EstateError, validationError } from '../../errors.ts';
import { defineOperation } from '../define-operation.ts';
import { lineField } from '../text-fields.ts';

// POST /ingest (DESIGN.md 7a): the samples a collector sends its hub, in the
// shapes of src/core/collect/sample-types.ts, stored through
// `ctx.store.series.ingest`, each once by its node and ts.

/** The most samples one request may carry. */
export const MAX_INGEST_SAMPLES = 1000;

/**
 * The largest /ingest body: room for 1000 samples of a node with a few dozen
 * file systems (a sample of a node with three is about 2 KB; each file
 * system adds about 200 bytes to its snapshots and 100 to its pulse checks).
 */
export const MAX_INGEST_BYTES = 8 * 1024 * 1024;

const number = () => z.number().meta({ description: 'A finite number.' });
const count = () => z.number().min(0);
const node = () => lineField(MAX_NODE_NAME, 'The node the sample is of (1–200 characters, one line): the same in every part of a sample.');
const ts = () =>
  z.string().max(64).meta({
    format: 'date-time',
    description: 'When the sample was taken: ISO 8601 with its offset, at most 5 minutes ahead of the hub\'s clock; the same instant in every part of a sample. Stored in UTC with milliseconds (`2026-11-21T13:05:00.000Z`).',
  });
/** A figure a newer collector may add: kept when it is a finite number. */
const extraFigure = z.number();

const trendPoint = z
  .object({
    ts: ts(),
    node: node(),
    cpu_pct: number().optional(),
    load1: number().optional(),
    load5: number().optional(),
    load15: number().optional(),
    mem_total_bytes: count().optional(),
    mem_used_bytes: number().optional(),
    mem_used_pct: number().optional(),
    mem_scope: z.enum(['host', 'cgroup']).optional(),
    swap_used_bytes: number().optional(),
    uptime_s: number().optional(),
    net_rx_bytes_s: number().optional(),
    net_tx_bytes_s: number().optional(),
    disk_read_bytes_s: number().optional(),
    disk_write_bytes_s: number().optional(),
  })
  .catchall(extraFigure)
  .meta({ id: 'IngestTrendPoint', description: 'A trend point (DESIGN.md 7a). Fields it does not name are kept when they are numbers (figures of a newer collector).' });

const diskSnapshot = z
  .object({
    ts: ts(),
    node: node(),
    mount: lineField(4096, 'The mount point, as the node sees it.'),
    fs_type: lineField(64, 'The file system type (`ext4`, `xfs`…).'),
    total_bytes: count(),
    used_bytes: count(),
    free_bytes: count(),
  })
  .catchall(extraFigure)
  .meta({ id: 'IngestDiskSnapshot', description: 'One file system of the node, sized as `df` does.' });

const status = z.enum(['healthy', 'degraded', 'unhealthy']);

const pulseEntry = z
  .strictObject({
    ts: ts(),
    node: node(),
    status,
    checks: z.record(
      lineField(4200, 'The check\'s name: `memory`, `load`, `disk:<mount>`, `collector`…'),
      z.strictObject({
        status,
        value: z.union([z.number(), z.array(z.string().max(200)).max(100)]).optional(),
        message: z.string().max(2000).optional(),
      }),
    ),
  })
  .meta({ id: 'IngestPulseEntry', description: 'The node\'s pulse: its worst status and each check.' });

const sample = z
  .strictObject({ trend: trendPoint, disks: z.array(diskSnapshot).max(1000), pulse: pulseEntry })
  .meta({ id: 'IngestSample', description: 'One sample of one node: every part has the same `node` and `ts`.' });

export const ingestCreate = defineOperation({
  id: 'ingest.create',
  method: 'POST',
  path: '/ingest',
  access: 'protected',
  scope: 'ingest',
  tag: 'hub',
  summary: 'Store samples that a node\'s collector sends to this hub',
  description: [
    `Takes up to ${MAX_INGEST_SAMPLES} samples, oldest first, in a body of at most ${MAX_INGEST_BYTES / 1024 / 1024} MiB (413 past it), and stores each once:`,
    'a sample is known by its node and `ts`, so one sent again (a lost answer, a spool sent twice) is counted in `duplicates` and nothing of it is written twice.',
    'Each node\'s heartbeat entry becomes its newest sample\'s. Durable when answered.',
    'Needs the `ingest` or `write` scope; an ingest key made with `--node NAME` is refused (403) for a sample of any other node, and nothing of its request is stored.',
    'A sample whose parts differ in `node` or `ts`, or whose `ts` is not ISO 8601 or is more than 5 minutes ahead of the hub\'s clock, is 422 at its `loc`, and nothing of the request is stored.',
  ].join(' '),
  input: {
    body: z.strictObject({
      samples: z.array(sample).min(1).max(MAX_INGEST_SAMPLES).meta({ description: `The samples, oldest first (1–${MAX_INGEST_SAMPLES}).` }),
    }),
  },
  output: z
    .object({
      stored: z.int().min(0).meta({ description: 'Samples stored now.' }),
      duplicates: z.int().min(0).meta({ description: 'Samples stored before (the same node and ts), left as they were.' }),
    })
    .meta({ id: 'IngestResult' }),
  maxBodyBytes: MAX_INGEST_BYTES,
  handler: async ({ ctx, input, principal }) => {
    const checked = checkSamples(input.body.samples as SeriesSample[], ctx.now());
    if ('problems' in checked) throw validationError(checked.problems.map((p) => ({ loc: ['body', 'samples', ...p.path], msg: p.msg, type: p.type })));
    const bound = principal?.node;
    if (bound !== undefined) {
      const other = checked.samples.findIndex((s) => s.trend.node !== bound);
      if (other !== -1) {
        throw new EstateError('forbidden', `This ingest key's scope is the samples of node "${bound}" only; sample ${other} is of node "${(checked.samples[other] as SeriesSample).trend.node}": nothing was stored`);
      }
    }
    return ctx.store.series.ingest(checked.samples);
  },
  cli: false,
});
