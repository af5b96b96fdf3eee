import { z } from 'zod';
import { documentExcerpt, readStateDocument, readStateExcerpt, STATE_FILES } from '../../core/state-files.ts';
import { EstateError } from '../../errors.ts';
import { defineOperation } from '../define-operation.ts';
import { dateTime } from '../schemas.ts';

export const stateAll = defineOperation({
  id: 'state.all',
  method: 'GET',
  path: '/state',
  access: 'protected',
  tag: 'state',
  summary: 'All estate state files, parsed',
  description: 'Every known state file with its modification time and parsed JSON; a missing file has `exists: false`, one that does not parse an `error`.',
  output: z.object({
    items: z.array(
      z
        .object({
          name: z.enum(STATE_FILES),
          exists: z.boolean(),
          modified_at: dateTime('When the file was last modified, UTC; null when it does not exist.').nullable(),
          data: z.unknown(),
          error: z.string().nullable(),
        })
        .meta({ id: 'StateFile' }),
    ),
    count: z.int(),
  }).meta({ id: 'StateFileList' }),
  handler: async ({ ctx }) => {
    // The heartbeat is the store's (DESIGN.md 7a); the other state files are the data dir's.
    const items = await Promise.all(STATE_FILES.map((name) => (name === 'heartbeat' ? ctx.store.series.heartbeat() : readStateDocument(ctx.dataDir, name))));
    return { items, count: items.length };
  },
  cli: { command: 'state', columns: ['name', 'exists', 'modified_at', 'error'], examples: ['estate state', 'estate state heartbeat --max-chars 200'] },
});

export const stateOne = defineOperation({
  id: 'state.get',
  method: 'GET',
  path: '/state/{file_name}',
  access: 'protected',
  tag: 'state',
  summary: 'One state file as text, cut at max_chars characters',
  description: 'The file\'s text, unparsed, cut at `max_chars` characters (`truncated` says when); 404 when the file does not exist.',
  input: {
    path: z.object({ file_name: z.enum(STATE_FILES).meta({ description: 'Which state file.' }) }),
    query: z.object({
      max_chars: z.int().min(1).max(1_000_000).default(5000).meta({ description: 'Cut the content at this many characters (1–1000000).' }),
    }),
  },
  output: z.object({
    name: z.enum(STATE_FILES),
    modified_at: dateTime('When the file was last modified, UTC.'),
    size_chars: z.int(),
    max_chars: z.int(),
    truncated: z.boolean(),
    content: z.string(),
  }).meta({ id: 'StateExcerpt' }),
  errors: [404],
  handler: async ({ ctx, input }) => {
    const { file_name: name } = input.path;
    const { max_chars: maxChars } = input.query;
    // The heartbeat of a store other than the data dir is its JSON; on the data dir, the file's text as stored.
    const excerpt =
      name === 'heartbeat' && ctx.store.kind !== 'data-dir' ? documentExcerpt(await ctx.store.series.heartbeat(), maxChars) : await readStateExcerpt(ctx.dataDir, name, maxChars);
    if (!excerpt) throw new EstateError('not_found', `state file ${input.path.file_name} does not exist`);
    return excerpt;
  },
  cli: { command: 'state', args: ['file_name'], examples: ['estate state scoreboard', 'estate state estate_map --max-chars 500'] },
});
