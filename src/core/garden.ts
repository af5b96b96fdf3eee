import { type EstateConfig, nodeName } from '../config.ts';
import type { FacetFilter } from './jsonl/indexed-file.ts';
import type { JsonRecord } from './jsonl/parse-record.ts';
import { settle } from './section.ts';
import type { Store } from './store/store.ts';

/** Items per garden list. */
export const GARDEN_LIMIT = 10;

/** Content types that are writings; every other content type is an expressive form (poem, sketch…). */
export const WRITING_TYPES: readonly string[] = ['essay', 'article', 'post', 'note', 'changelog', 'story', 'letter', 'review', 'journal'];

const isWriting = (contentType: string) => WRITING_TYPES.includes(contentType.toLowerCase());
/** The entries of each list, by the publishing log's content-type facet: each list's newest, whatever was published after them. */
const WRITINGS: FacetFilter = { facet: 'content_type', accepts: isWriting };
const FORMS: FacetFilter = { facet: 'content_type', accepts: (contentType) => !isWriting(contentType) };

export interface GardenPiece {
  entry_id: string | null;
  title: string;
  slug: string | null;
  content_type: string;
  target_site: string | null;
  url: string | null;
  summary: string | null;
  /** `published_at`, else `registered_at`. */
  published_at: string | null;
}

export interface GardenList {
  items: GardenPiece[];
  count: number;
  error: string | null;
}

export interface Garden {
  identity: { name: string; tagline: string | null; links: { label: string; url: string }[]; node: string };
  writings: GardenList;
  forms: GardenList;
  pulse: { status: string; ts: string | null; last_activity: string | null; error: string | null };
  generated_at: string;
}

/**
 * The garden feed: the newest writings and expressive forms from the
 * publishing feed, the estate pulse (newest health pulse and last agent
 * activity) and the estate's identity from the config. Each section carries
 * its own `error`; one unreadable log never fails the whole answer.
 */
export async function gardenFeed(
  ctx: { config: EstateConfig; store: Pick<Store, 'completions' | 'starts' | 'entries' | 'series'> },
  now: Date,
): Promise<Garden> {
  const { config, store } = ctx;
  const [writings, forms, pulse, last] = await Promise.all([
    settle('publishing/entries.jsonl', () => store.entries.newest(GARDEN_LIMIT, WRITINGS)),
    settle('publishing/entries.jsonl', () => store.entries.newest(GARDEN_LIMIT, FORMS)),
    settle('health-pulse.jsonl', async () => (await store.series.newest('pulse', 1)).items[0]),
    settle('work/completions.jsonl', async () => (await store.completions.newest(1)).records[0]),
  ]);
  const list = (entries: typeof writings): GardenList => {
    const items = (entries.value?.records ?? []).map(toPiece).filter((p): p is GardenPiece => p !== undefined);
    return { items, count: items.length, error: entries.error };
  };
  const node = nodeName(config);
  return {
    identity: {
      name: config.identity?.name ?? node,
      tagline: config.identity?.tagline ?? null,
      links: config.identity?.links ?? [],
      node,
    },
    writings: list(writings),
    forms: list(forms),
    pulse: {
      status: text(pulse.value?.status) ?? 'unknown',
      ts: text(pulse.value?.ts),
      last_activity: text(last.value?.completed_at),
      error: pulse.error ?? last.error,
    },
    generated_at: now.toISOString(),
  };
}

function toPiece(r: JsonRecord): GardenPiece | undefined {
  const title = text(r.title);
  const contentType = text(r.content_type);
  if (!title || !contentType) return undefined;
  return {
    entry_id: text(r.entry_id),
    title,
    slug: text(r.slug),
    content_type: contentType,
    target_site: text(r.target_site),
    url: text(r.url),
    summary: text(r.summary),
    published_at: text(r.published_at) ?? text(r.registered_at),
  };
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value ? value : null;
}
