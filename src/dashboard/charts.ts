import uPlot from 'uplot';
import { formatBytes, formatNumber, formatPct, formatTime } from './format.ts';
import { palette } from './theme.ts';

// Time-series charts (uPlot): one cursor shared by every chart of the page
// (the `estate` sync key), a drag across a chart asks for that window, the
// x axis always the view's whole window (so charts line up), and for one
// node each line's min–max band drawn beneath it.

export type Unit = 'pct' | 'bytes' | 'rate' | 'number';

export interface Line {
  label: string;
  /** One value per x, null where the window holds no bucket. */
  values: (number | null)[];
  band?: { min: (number | null)[]; max: (number | null)[] };
}

export interface ChartData {
  /** Bucket starts, seconds since the epoch, ascending. */
  xs: number[];
  lines: Line[];
}

const SYNC_KEY = 'estate';

export function formatValue(unit: Unit, v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  if (unit === 'pct') return formatPct(v);
  if (unit === 'bytes') return formatBytes(v);
  if (unit === 'rate') return `${formatBytes(v)}/s`;
  return formatNumber(v);
}

/** A chart in `host` that keeps its uPlot across updates of the same lines, and follows the host's width. */
export class Chart {
  readonly #host: HTMLElement;
  readonly #unit: Unit;
  readonly #onZoom: (from: number, to: number) => void;
  #plot: uPlot | undefined;
  #shape = '';
  #window = { from: 0, to: 1 };
  #data: ChartData = { xs: [], lines: [] };
  readonly #resize: ResizeObserver;

  constructor(host: HTMLElement, unit: Unit, onZoom: (from: number, to: number) => void) {
    this.#host = host;
    this.#unit = unit;
    this.#onZoom = onZoom;
    this.#resize = new ResizeObserver(() => this.#plot?.setSize(this.#size()));
    this.#resize.observe(host);
  }

  /** Shows `data` over the window [from, to) (ms). */
  update(data: ChartData, window: { from: number; to: number }): void {
    this.#window = window;
    this.#data = data;
    const shape = data.lines.map((l) => `${l.label}${l.band ? '+' : ''}`).join('\n');
    const aligned = [data.xs, ...data.lines.map((l) => l.values)] as uPlot.AlignedData;
    if (this.#plot && shape === this.#shape) {
      this.#plot.setData(aligned);
      return;
    }
    this.#plot?.destroy();
    this.#shape = shape;
    this.#plot = new uPlot(this.#options(data), aligned, this.#host);
  }

  /** Made again with the palette of now (the colour scheme changed). */
  repaint(): void {
    if (!this.#plot) return;
    this.#plot.destroy();
    this.#plot = undefined;
    this.update(this.#data, this.#window);
  }

  destroy(): void {
    this.#resize.disconnect();
    this.#plot?.destroy();
    this.#plot = undefined;
  }

  #size(): { width: number; height: number } {
    const width = Math.max(200, Math.floor(this.#host.clientWidth));
    return { width, height: Math.round(Math.min(260, Math.max(150, width * 0.36))) };
  }

  #options(data: ChartData): uPlot.Options {
    const colours = palette();
    const unit = this.#unit;
    const axis = { stroke: colours.muted, grid: { stroke: colours.grid, width: 1 }, ticks: { stroke: colours.grid, width: 1 } };
    return {
      ...this.#size(),
      scales: {
        x: { time: true, range: () => [this.#window.from / 1000, this.#window.to / 1000] },
        y: {
          range: (_u, _min, max) => {
            const top = Number.isFinite(max) && max > 0 ? max * 1.08 : 1;
            return [0, unit === 'pct' && top > 50 ? Math.max(100, top) : top];
          },
        },
      },
      series: [
        { value: (_u, v) => (v === null || v === undefined ? '–' : formatTime(v * 1000)) },
        ...data.lines.map((line, i) => ({
          label: line.label,
          stroke: colours.series[i % colours.series.length] as string,
          width: 1.5,
          points: { show: false },
          value: (_u: uPlot, v: number | null, _s: number, idx: number | null) => {
            const band = idx === null ? undefined : this.#data.lines[i]?.band;
            if (!band || idx === null) return formatValue(unit, v);
            return `${formatValue(unit, v)} (${formatValue(unit, band.min[idx])} – ${formatValue(unit, band.max[idx])})`;
          },
        })),
      ],
      axes: [
        axis,
        { ...axis, size: unit === 'rate' ? 86 : unit === 'bytes' ? 74 : 58, values: (_u, ticks) => ticks.map((t) => formatValue(unit, t)) },
      ],
      cursor: { sync: { key: SYNC_KEY }, drag: { x: true, y: false, setScale: false } },
      legend: { live: true },
      hooks: {
        drawAxes: [(u) => this.#drawBands(u, colours.series, Number(colours.band))],
        setSelect: [
          (u) => {
            if (u.select.width < 4) return;
            const from = u.posToVal(u.select.left, 'x') * 1000;
            const to = u.posToVal(u.select.left + u.select.width, 'x') * 1000;
            u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
            if (to - from >= 60_000) this.#onZoom(Math.round(from), Math.round(to));
          },
        ],
      },
    };
  }

  /** Each line's min–max band, filled beneath the lines. */
  #drawBands(u: uPlot, colours: string[], alpha: number): void {
    const { xs, lines } = this.#data;
    const ctx = u.ctx;
    ctx.save();
    ctx.beginPath();
    ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
    ctx.clip();
    lines.forEach((line, i) => {
      const band = line.band;
      if (!band) return;
      ctx.globalAlpha = Number.isFinite(alpha) ? alpha : 0.16;
      ctx.fillStyle = colours[i % colours.length] as string;
      // One polygon per run of buckets with values (a gap breaks the band as it breaks the line).
      let run: number[] = [];
      const flush = () => {
        if (run.length) {
          ctx.beginPath();
          run.forEach((j, k) => {
            const x = u.valToPos(xs[j] as number, 'x', true);
            const y = u.valToPos(band.max[j] as number, 'y', true);
            if (k === 0) ctx.moveTo(x, y);
            else ctx.lineTo(x, y);
          });
          for (const j of [...run].reverse()) ctx.lineTo(u.valToPos(xs[j] as number, 'x', true), u.valToPos(band.min[j] as number, 'y', true));
          ctx.closePath();
          ctx.fill();
        }
        run = [];
      };
      xs.forEach((_x, j) => {
        if (band.min[j] === null || band.max[j] === null || band.min[j] === undefined || band.max[j] === undefined) flush();
        else run.push(j);
      });
      flush();
    });
    ctx.restore();
  }
}
