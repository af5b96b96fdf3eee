import type { NodeSummary as NodeRow } from '../../core/hub/node-summary.ts';
import type { Answer, Api } from '../api.ts';
import { el, replace, type Child } from '../dom.ts';
import type { View } from '../view.ts';

/** One node of GET /nodes: the server's own type (type-only, nothing of core is bundled). */
export type { NodeRow };

/** What every panel is refreshed with. */
export interface PanelContext {
  api: Api;
  view: View;
  /** The view's window now, ms (`to` exclusive). */
  window: { from: number; to: number };
  now: number;
  /** The name of the node the server runs on (a record without `node` is its). */
  localNode: string;
  /** GET /nodes, when the key may read it. */
  nodes: NodeRow[] | undefined;
  setView: (change: Partial<View>) => void;
}

export interface Panel {
  readonly element: HTMLElement;
  refresh(ctx: PanelContext): Promise<void>;
  /** The colour scheme changed. */
  repaint?(): void;
}

export type PanelState = 'loading' | 'ok' | 'empty' | 'needs-key' | 'refused' | 'error';

/** A panel's card: a heading, a body the panel fills, and its state in `data-state` (for styling and tests). */
export class Card {
  readonly element: HTMLElement;
  readonly body: HTMLElement;
  readonly tools: HTMLElement;

  constructor(id: string, title: string, options: { wide?: boolean } = {}) {
    const heading = el('h2', { id: `${id}-title`, text: title });
    this.tools = el('div', { class: 'card-tools' });
    this.body = el('div', { class: 'card-body' }, el('p', { class: 'muted', text: 'Loading…' }));
    this.element = el('section', { id, class: options.wide ? 'card wide' : 'card', 'aria-labelledby': `${id}-title`, 'data-state': 'loading' }, el('div', { class: 'card-head' }, heading, this.tools), this.body);
  }

  set state(state: PanelState) {
    this.element.dataset.state = state;
  }

  show(state: PanelState, ...children: Child[]): void {
    this.state = state;
    replace(this.body, ...children);
  }

  /** The data of an answer, or undefined after showing why there is none (no key, key refused, an error). */
  take<T>(answer: Answer<T>): T | undefined {
    if (answer.kind === 'ok') return answer.data;
    if (answer.kind === 'needs-key') this.show('needs-key', el('p', { class: 'locked', text: 'Protected: enter an API key above to see this panel.' }));
    else if (answer.kind === 'refused') this.show('refused', el('p', { class: 'locked', text: `The key was refused: ${answer.message}` }));
    else this.show('error', el('p', { class: 'error', text: answer.message }));
    return undefined;
  }
}

/** A status word as a coloured badge. */
export function badge(status: string | null | undefined, text?: string): HTMLElement {
  const word = status ?? 'unknown';
  return el('span', { class: `badge s-${statusClass(word)}`, text: text ?? word });
}

/** The class of a status word: good, warn, bad or none. */
export function statusClass(status: string): 'good' | 'warn' | 'bad' | 'none' {
  if (['healthy', 'ok', 'up', 'success', 'reachable', 'busy'].includes(status)) return 'good';
  if (['degraded', 'late', 'stale', 'cancelled', 'unknown'].includes(status)) return 'warn';
  if (['unhealthy', 'down', 'failure', 'unreachable', 'error'].includes(status)) return 'bad';
  return 'none';
}

/** `used` as a level against the collector's default disk thresholds (DESIGN.md 7a: 85 and 95). */
export function diskLevel(pct: number | null | undefined): 'good' | 'warn' | 'bad' | 'none' {
  if (pct === null || pct === undefined || !Number.isFinite(pct)) return 'none';
  return pct >= 95 ? 'bad' : pct >= 85 ? 'warn' : 'good';
}
