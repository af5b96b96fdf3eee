// What the dashboard shows, kept in the page's URL so a link opens the same
// view: `?node=web-1&range=7d&fields=gpu_temp_c`, or a fixed window
// `?from=2026-12-01T00:00:00Z&to=2026-12-02T00:00:00Z`.

export const PRESETS = ['1h', '6h', '24h', '7d', '30d'] as const;
export type Preset = (typeof PRESETS)[number];

const PRESET_MS: Readonly<Record<Preset, number>> = { '1h': 3_600_000, '6h': 21_600_000, '24h': 86_400_000, '7d': 604_800_000, '30d': 2_592_000_000 };

/** A field name the range routes take: letters, digits and `_`. */
export const FIELD_NAME = /^[A-Za-z0-9_]{1,64}$/;

export interface View {
  /** One node's view; undefined for every node. */
  node: string | undefined;
  /** A window ending now; undefined when `from` and `to` fix one. */
  preset: Preset | undefined;
  /** The fixed window, ms since the epoch (`to` exclusive). */
  from: number | undefined;
  to: number | undefined;
  /** Trend fields charted beside the default ones. */
  fields: string[];
}

export function isPreset(text: unknown): text is Preset {
  return typeof text === 'string' && (PRESETS as readonly string[]).includes(text);
}

function parseTime(text: string | null): number | undefined {
  if (!text) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : at;
}

/** The view a query string asks for; what it does not say (or says wrongly) is the default: every node, the last 24 hours. */
export function parseView(search: string): View {
  const q = new URLSearchParams(search);
  const node = q.get('node')?.trim() || undefined;
  const fields = [...new Set((q.get('fields') ?? '').split(',').filter((f) => FIELD_NAME.test(f)))];
  const from = parseTime(q.get('from'));
  const to = parseTime(q.get('to'));
  if (from !== undefined && to !== undefined && from < to) return { node, preset: undefined, from, to, fields };
  const range = q.get('range');
  return { node, preset: isPreset(range) ? range : '24h', from: undefined, to: undefined, fields };
}

/** The query string of `view` (without `?`), the defaults left out. */
export function viewQuery(view: View): string {
  const q = new URLSearchParams();
  if (view.node) q.set('node', view.node);
  if (view.preset === undefined && view.from !== undefined && view.to !== undefined) {
    q.set('from', new Date(view.from).toISOString());
    q.set('to', new Date(view.to).toISOString());
  } else if (view.preset && view.preset !== '24h') q.set('range', view.preset);
  if (view.fields.length) q.set('fields', view.fields.join(','));
  return q.toString();
}

/** The window the view shows at `now` (ms). */
export function windowOf(view: View, now: number): { from: number; to: number } {
  if (view.preset === undefined && view.from !== undefined && view.to !== undefined) return { from: view.from, to: view.to };
  const length = PRESET_MS[view.preset ?? '24h'];
  return { from: now - length, to: now };
}
