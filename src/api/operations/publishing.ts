import { z } from 'zod';
import { findEntry, latestEntries, registerEntry } from '../../core/publishing.ts';
import { EstateError } from '../../errors.ts';
import { defineOperation, reply } from '../define-operation.ts';
import { dateTime, limitParam, page, storedTime } from '../schemas.ts';
import { lineField, optionalHttpUrlField, optionalTextField, slugField } from '../text-fields.ts';

export const entryBody = z.strictObject({
  title: lineField(300, 'The piece\'s title (1–300 characters).'),
  slug: slugField('The piece\'s slug on its site; unique per site.'),
  content_type: slugField('What kind of piece: `essay`, `note`, `poem`, `changelog`… (a slug).'),
  target_site: slugField('The site it is published on (a slug).'),
  url: optionalHttpUrlField('Where the piece is: an http(s) URL of at most 2048 characters.'),
  summary: optionalTextField(2000, 'A short summary, at most 2000 characters.'),
  published_at: z.iso
    .datetime({ offset: true })
    .nullish()
    .meta({ description: 'When it was published: ISO 8601 date and time with Z or an offset.', examples: ['2026-11-21T16:00:00Z'] }),
});

export const entry = z
  .looseObject({
    entry_id: z.string().meta({ description: 'Given by the service: `pub_` and 16 hex digits.', examples: ['pub_d5e0373afedd3a64'] }),
    title: z.string(),
    slug: z.string(),
    content_type: z.string(),
    target_site: z.string(),
    url: z.string().optional(),
    summary: z.string().optional(),
    published_at: storedTime('When it was published, kept as sent at registration (where it must be ISO 8601 with `Z` or an offset)').optional(),
    registered_at: dateTime('When estate registered the entry, UTC.'),
  })
  .meta({ id: 'PublishedEntry', description: 'A published entry, as stored.' });

type Entry = z.output<typeof entry>;

const entries = page(entry, 'PublishedEntryPage');
const listLimit = limitParam(100, 1000, 'entries');

function asPage(records: Record<string, unknown>[], skipped: number, limit: number): z.output<typeof entries> {
  return { items: records as Entry[], count: records.length, limit, skipped_lines: skipped };
}

export const publishingRegister = defineOperation({
  id: 'publishing.register',
  method: 'POST',
  path: '/publishing/register',
  access: 'protected',
  tag: 'publishing',
  summary: 'Register a newly published piece',
  description: [
    'Stores the entry with an `entry_id` and `registered_at`, durably, and answers **201** with it.',
    'The same `(target_site, slug)` sent again with the same fields answers **200** with the stored entry and writes nothing;',
    'with different fields it is **409**.',
  ].join(' '),
  input: { body: entryBody },
  output: entry,
  status: 201,
  location: (created) => `/publishing/${encodeURIComponent(created.entry_id)}`,
  replies: [200],
  errors: [409],
  handler: async ({ ctx, input }) => {
    const { outcome, record, differing } = await registerEntry(ctx.store.entries, input.body, ctx.now);
    if (outcome === 'conflict') {
      throw new EstateError(
        'conflict',
        `${input.body.target_site}/${input.body.slug} is already registered (${String(record.entry_id)}) with a different ${differing.join(', ')}`,
      );
    }
    return outcome === 'created' ? (record as Entry) : reply(200, record as Entry);
  },
  cli: {
    command: 'publish register',
    examples: [
      'estate publish register --title "Seed swap" --slug seed-swap --content-type note --target-site garden',
      'estate publish register --title "Week 47" --slug week-47 --content-type changelog --target-site blog --entry-url https://blog.example.org/week-47',
    ],
  },
});

export const publishingLatest = defineOperation({
  id: 'publishing.latest',
  method: 'GET',
  path: '/publishing/latest',
  access: 'public',
  tag: 'publishing',
  summary: 'Latest published pieces, newest first',
  description: 'The newest `limit` registered entries of every site and type.',
  input: { query: z.object({ limit: limitParam(10, 1000, 'entries') }) },
  output: entries,
  handler: async ({ ctx, input }) => {
    const { records, skipped } = await latestEntries(ctx.store.entries, input.query.limit);
    return asPage(records, skipped, input.query.limit);
  },
  cli: { command: 'publish latest', columns: ['registered_at', 'target_site', 'content_type', 'slug', 'title'], examples: ['estate publish latest --limit 5'] },
});

export const publishingBySite = defineOperation({
  id: 'publishing.by_site',
  method: 'GET',
  path: '/publishing/by-site/{site}',
  access: 'public',
  tag: 'publishing',
  summary: 'Published entries of one target site, newest first',
  description: 'The newest `limit` entries whose `target_site` is `site`; an empty page when the site has none.',
  input: { path: z.object({ site: slugField('The target site.') }), query: z.object({ limit: listLimit }) },
  output: entries,
  handler: async ({ ctx, input }) => {
    const { records, skipped } = await latestEntries(ctx.store.entries, input.query.limit, { facet: 'target_site', value: input.path.site });
    return asPage(records, skipped, input.query.limit);
  },
  cli: { command: 'publish by-site', args: ['site'], columns: ['registered_at', 'content_type', 'slug', 'title'], examples: ['estate publish by-site garden'] },
});

export const publishingByType = defineOperation({
  id: 'publishing.by_type',
  method: 'GET',
  path: '/publishing/by-type/{content_type}',
  access: 'public',
  tag: 'publishing',
  summary: 'Published entries of one content type, newest first',
  description: 'The newest `limit` entries whose `content_type` is `content_type`; an empty page when there are none.',
  input: { path: z.object({ content_type: slugField('The content type.') }), query: z.object({ limit: listLimit }) },
  output: entries,
  handler: async ({ ctx, input }) => {
    const { records, skipped } = await latestEntries(ctx.store.entries, input.query.limit, { facet: 'content_type', value: input.path.content_type });
    return asPage(records, skipped, input.query.limit);
  },
  cli: { command: 'publish by-type', args: ['content_type'], columns: ['registered_at', 'target_site', 'slug', 'title'], examples: ['estate publish by-type essay --limit 5'] },
});

export const publishingGet = defineOperation({
  id: 'publishing.get',
  method: 'GET',
  path: '/publishing/{entry_id}',
  access: 'public',
  tag: 'publishing',
  summary: 'One published entry',
  description: 'The entry registered under `entry_id`; 404 when there is none.',
  input: { path: z.object({ entry_id: z.string().min(1).max(128).meta({ description: 'The entry\'s id, e.g. `pub_d5e0373afedd3a64`.' }) }) },
  output: entry,
  errors: [404],
  handler: async ({ ctx, input }) => {
    const found = await findEntry(ctx.store.entries, input.path.entry_id);
    if (!found) throw new EstateError('not_found', `no published entry ${input.path.entry_id}`);
    return found as Entry;
  },
  cli: { command: 'publish show', args: ['entry_id'], examples: ['estate publish show pub_d5e0373afedd3a64'] },
});
