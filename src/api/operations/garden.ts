import { z } from 'zod';
import { gardenFeed } from '../../core/garden.ts';
import { defineOperation } from '../define-operation.ts';
import { dateTime } from '../schemas.ts';

const text = z.string().nullable();

const pieces = z
  .object({
    items: z.array(
      z.object({
        entry_id: text,
        title: z.string(),
        slug: text,
        content_type: z.string(),
        target_site: text,
        url: text,
        summary: text,
        published_at: text.meta({ description: '`published_at`, else when it was registered.' }),
      }),
    ),
    count: z.int(),
    error: text.meta({ description: 'Why the publishing feed could not be read; null when it was.' }),
  })
  .meta({ description: 'Newest first, at most 10.' });

export const gardenGet = defineOperation({
  id: 'garden.get',
  expensive: true,
  method: 'GET',
  path: '/api/garden',
  access: 'public',
  tag: 'garden',
  summary: 'The garden feed: writings, expressive forms, the estate pulse and identity',
  description:
    'Writings are entries whose content type is essay, article, post, note, changelog, story, letter, review or journal; every other type is an expressive form. ' +
    'Each section has its own `error`: an unreadable log never fails the answer.',
  output: z.object({
    identity: z.object({
      name: z.string(),
      tagline: text,
      links: z.array(z.object({ label: z.string(), url: z.string() })),
      node: z.string(),
    }),
    writings: pieces,
    forms: pieces,
    pulse: z.object({ status: z.string(), ts: text, last_activity: text, error: text }),
    generated_at: dateTime('When this feed was gathered, UTC.'),
  }),
  volatile: ['generated_at'],
  handler: ({ ctx }) => gardenFeed(ctx, ctx.now()),
  cli: { command: 'garden', examples: ['estate garden', 'estate garden --json | jq ".writings.items[].title"'] },
});
