// The chart colours, read from the stylesheet's custom properties, so light
// and dark (prefers-color-scheme) are the stylesheet's alone.

export interface Palette {
  fg: string;
  muted: string;
  grid: string;
  series: string[];
  band: string;
}

export function palette(): Palette {
  const style = getComputedStyle(document.documentElement);
  const v = (name: string, fallback: string) => style.getPropertyValue(name).trim() || fallback;
  return {
    fg: v('--fg', '#1d2125'),
    muted: v('--muted', '#5f6b76'),
    grid: v('--line', '#e3e6e8'),
    series: [1, 2, 3, 4, 5, 6, 7, 8].map((i) => v(`--series-${i}`, '#2f6f4f')),
    band: v('--band-alpha', '0.16'),
  };
}

/** Calls `onChange` when the reader's colour scheme changes. */
export function onSchemeChange(onChange: () => void): void {
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', onChange);
}
