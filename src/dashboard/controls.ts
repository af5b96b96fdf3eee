import { el, replace } from './dom.ts';
import { currentKey, forgetKey, storeKey } from './key.ts';
import type { NodeRow } from './panels/panel.ts';
import { PRESETS, type View } from './view.ts';

// The header: the node, the window (presets, any range), and the key.

export interface Controls {
  element: HTMLElement;
  /** Shows `view` and the nodes known. */
  show(view: View, nodes: readonly NodeRow[] | undefined): void;
  /** Says whether the key is missing, held, or was refused. */
  keyState(state: 'none' | 'held' | 'refused'): void;
}

/** The local time of `at` (ms) as a datetime-local input takes it. */
function localInput(at: number): string {
  const d = new Date(at);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

export function controls(node: string, onView: (change: Partial<View>) => void, onKey: () => void, onRefresh: () => void): Controls {
  const nodeSelect = el('select', { id: 'node-select', 'aria-label': 'Node' });
  nodeSelect.addEventListener('change', () => onView({ node: nodeSelect.value || undefined }));
  const presets = PRESETS.map((p) => {
    const b = el('button', { type: 'button', class: 'preset', 'data-preset': p, 'aria-pressed': 'false', text: p });
    b.addEventListener('click', () => onView({ preset: p, from: undefined, to: undefined }));
    return b;
  });
  const fromInput = el('input', { type: 'datetime-local', 'aria-label': 'From', required: true });
  const toInput = el('input', { type: 'datetime-local', 'aria-label': 'To', required: true });
  const rangeForm = el('form', { class: 'range', 'aria-label': 'Any range' }, fromInput, el('span', { 'aria-hidden': 'true', text: '–' }), toInput, el('button', { type: 'submit', text: 'Show' }));
  rangeForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const from = Date.parse(fromInput.value);
    const to = Date.parse(toInput.value);
    if (Number.isNaN(from) || Number.isNaN(to) || from >= to) {
      toInput.setCustomValidity('The end must come after the start');
      toInput.reportValidity();
      return;
    }
    toInput.setCustomValidity('');
    onView({ preset: undefined, from, to });
  });

  const keyInput = el('input', { type: 'password', id: 'key-input', autocomplete: 'off', spellcheck: 'false', placeholder: 'API key', 'aria-label': 'API key' });
  const keyForm = el('form', { id: 'key-form', class: 'key' }, keyInput, el('button', { type: 'submit', text: 'Use key' }));
  const keyNote = el('span', { id: 'key-note', class: 'muted small', 'aria-live': 'polite' });
  const forget = el('button', { type: 'button', id: 'key-forget', class: 'link', text: 'Forget key' });
  keyForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const key = keyInput.value.trim();
    if (!key) return;
    storeKey(key);
    keyInput.value = '';
    onKey();
  });
  forget.addEventListener('click', () => {
    forgetKey();
    onKey();
  });
  const refresh = el('button', { type: 'button', id: 'refresh', 'aria-label': 'Refresh now', title: 'Refresh now', text: '↻' });
  refresh.addEventListener('click', onRefresh);
  const keyBox = el('div', { class: 'keybox' }, keyNote, keyForm, forget);

  const element = el(
    'header',
    { class: 'bar' },
    el('h1', {}, el('a', { href: 'dashboard', text: 'estate' })),
    el('span', { class: 'muted', text: node }),
    nodeSelect,
    el('div', { class: 'presets', role: 'group', 'aria-label': 'Window' }, ...presets),
    rangeForm,
    refresh,
    keyBox,
  );

  return {
    element,
    show(view, nodes) {
      const names = new Set((nodes ?? []).map((n) => n.name));
      if (view.node) names.add(view.node);
      replace(nodeSelect, el('option', { value: '', text: 'All nodes' }), ...[...names].sort().map((n) => el('option', { value: n, text: n })));
      nodeSelect.value = view.node ?? '';
      for (const b of presets) b.setAttribute('aria-pressed', String(b.dataset.preset === view.preset));
      if (view.preset === undefined && view.from !== undefined && view.to !== undefined) {
        fromInput.value = localInput(view.from);
        toInput.value = localInput(view.to);
      }
    },
    keyState(state) {
      const held = state === 'held' && currentKey() !== undefined;
      keyForm.hidden = held;
      forget.hidden = !held;
      keyNote.textContent = held ? 'key in use (this tab only)' : state === 'refused' ? 'key refused: enter another' : 'public view';
    },
  };
}
