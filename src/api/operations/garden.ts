import { z } from 'zod';
import { gardenFeed } from '../../core/garden.ts';
import { defineOperation } from '../define-operation.ts';
import { dateTime, nodeNameField, storedTime } from '../schemas.ts';

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
        published_at: storedTime('Its `published_at`, else its `registered_at`').nullable(),
      }).meta({ id: 'GardenPiece', description: 'A published entry as the garden shows it.' }),
    ),
    count: z.int(),
    error: text.meta({ description: 'Why the publishing feed could not be read; null when it was.' }),
  })
  .meta({ id: 'GardenPieceList', description: 'Newest first, at most 10.' });

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
      node: nodeNameField(),
    }),
    writings: pieces,
    forms: pieces,
    pulse: z.object({
      status: z.string(),
      ts: storedTime('The newest pulse\'s `ts`, as stored').nullable(),
      last_activity: dateTime('When an agent last completed a task (the newest completion\'s `completed_at`), UTC.').nullable(),
      error: text,
    }),
    generated_at: dateTime('When this feed was gathered, UTC.'),
  }).meta({ id: 'Garden', description: 'The garden feed: identity, writings, expressive forms and the estate pulse, each section with its own `error`.' }),
  volatile: ['generated_at'],
  handler: ({ ctx }) => gardenFeed(ctx, ctx.now()),
  cli: { command: 'garden', examples: ['estate garden', 'estate garden --json | jq ".writings.items[].title"'] },
});
