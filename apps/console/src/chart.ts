import { h, s } from './dom.js';
import { compact, timeLabel } from './format.js';

/** Okabe–Ito: safe for the common colour-vision deficiencies; black last. */
export const PALETTE = [
  '#0072B2',
  '#D55E00',
  '#009E73',
  '#CC79A7',
  '#E69F00',
  '#56B4E9',
  '#000000',
  '#F0E442',
];
/** A second cue besides colour: every series has its own marker and dash. */
const SHAPES = ['circle', 'square', 'triangle', 'diamond', 'cross', 'circle', 'square', 'triangle'] as const;
const DASHES = ['', '6 3', '2 3', '8 3 2 3', '', '6 3', '2 3', '8 3 2 3'];

export interface LineSeries {
  readonly label: string;
  readonly points: readonly (readonly [number, number])[];
}

const W = 640;
const H = 220;
const PAD = { left: 48, right: 12, top: 10, bottom: 26 };

function marker(shape: (typeof SHAPES)[number], x: number, y: number, color: string): SVGElement {
  const r = 3.5;
  switch (shape) {
    case 'circle':
      return s('circle', { cx: x, cy: y, r, fill: color });
    case 'square':
      return s('rect', { x: x - r, y: y - r, width: 2 * r, height: 2 * r, fill: color });
    case 'triangle':
      return s('path', { d: `M${x} ${y - r - 1}L${x + r + 1} ${y + r}L${x - r - 1} ${y + r}Z`, fill: color });
    case 'diamond':
      return s('path', {
        d: `M${x} ${y - r - 1}L${x + r + 1} ${y}L${x} ${y + r + 1}L${x - r - 1} ${y}Z`,
        fill: color,
      });
    case 'cross':
      return s('path', {
        d: `M${x - r} ${y - r}L${x + r} ${y + r}M${x + r} ${y - r}L${x - r} ${y + r}`,
        stroke: color,
        'stroke-width': 2,
      });
  }
}

function legend(labels: readonly string[]): HTMLElement {
  return h(
    'ul',
    { class: 'legend' },
    labels.map((label, i) =>
      h(
        'li',
        {},
        s(
          'svg',
          { width: 22, height: 12, 'aria-hidden': 'true' },
          s('line', {
            x1: 0,
            y1: 6,
            x2: 22,
            y2: 6,
            stroke: PALETTE[i % 8],
            'stroke-width': 2,
            'stroke-dasharray': DASHES[i % 8],
          }),
          marker(SHAPES[i % 8], 11, 6, PALETTE[i % 8]),
        ),
        label,
      ),
    ),
  );
}

function axisY(max: number): SVGElement[] {
  const ticks = [0, max / 2, max];
  return ticks.map((v) => {
    const y = PAD.top + (H - PAD.top - PAD.bottom) * (1 - v / max);
    return s(
      'g',
      {},
      s('line', { x1: PAD.left, x2: W - PAD.right, y1: y, y2: y, stroke: '#e3e3e3' }),
      s('text', { x: PAD.left - 6, y: y + 4, 'text-anchor': 'end' }, compact(v)),
    );
  });
}

/** Lines over time (rates); `title` names the chart for screen readers, the table beside it has the numbers. */
export function lineChart(title: string, series: readonly LineSeries[]): HTMLElement {
  const all = series.flatMap((x) => x.points);
  if (all.length === 0) return h('p', { class: 'note' }, `${title}: no samples yet`);
  const [t0, t1] = [Math.min(...all.map((p) => p[0])), Math.max(...all.map((p) => p[0]))];
  const max = Math.max(...all.map((p) => p[1]), 1e-9) * 1.1;
  const x = (t: number) => PAD.left + (W - PAD.left - PAD.right) * (t1 === t0 ? 0.5 : (t - t0) / (t1 - t0));
  const y = (v: number) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - v / max);
  const every = Math.max(1, Math.ceil(all.length / series.length / 12));
  const svg = s(
    'svg',
    { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title },
    s('title', {}, title),
    axisY(max),
    s('text', { x: PAD.left, y: H - 6 }, timeLabel(t0)),
    s('text', { x: W - PAD.right, y: H - 6, 'text-anchor': 'end' }, timeLabel(t1)),
    series.map((line, i) =>
      s(
        'g',
        {},
        s('polyline', {
          fill: 'none',
          stroke: PALETTE[i % 8],
          'stroke-width': 2,
          'stroke-dasharray': DASHES[i % 8],
          points: line.points.map((p) => `${x(p[0])},${y(p[1])}`).join(' '),
        }),
        line.points
          .filter((_, j) => j % every === 0 || j === line.points.length - 1)
          .map((p) => marker(SHAPES[i % 8], x(p[0]), y(p[1]), PALETTE[i % 8])),
      ),
    ),
  );
  return h('figure', { class: 'fig' }, svg, legend(series.map((x) => x.label)));
}

export interface Bar {
  readonly label: string;
  /** One value per group (several: grouped bars, e.g. actual vs proposed). */
  readonly values: readonly number[];
}

/** Bars per label; `onPick` makes each bar a button (drill-down), with the same action in the table. */
export function barChart(
  title: string,
  groups: readonly string[],
  bars: readonly Bar[],
  onPick?: (label: string) => void,
): HTMLElement {
  if (bars.length === 0) return h('p', { class: 'note' }, `${title}: nothing in this range`);
  const max = Math.max(...bars.flatMap((b) => b.values), 1) * 1.1;
  const slot = (W - PAD.left - PAD.right) / bars.length;
  const width = Math.max(1, (slot * 0.8) / groups.length);
  const y = (v: number) => PAD.top + (H - PAD.top - PAD.bottom) * (1 - v / max);
  const svg = s(
    'svg',
    { class: 'chart', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title },
    s('title', {}, title),
    axisY(max),
    bars.map((bar, i) =>
      s(
        'g',
        { 'data-label': bar.label },
        bar.values.map((v, g) =>
          s('rect', {
            x: PAD.left + slot * i + slot * 0.1 + width * g,
            y: y(v),
            width,
            height: Math.max(0, H - PAD.bottom - y(v)),
            fill: PALETTE[g % 8],
            // Grouped bars differ by pattern too: the second group is outlined, not filled.
            ...(g % 2 === 1 ? { fill: '#fff', stroke: PALETTE[g % 8], 'stroke-width': 2 } : {}),
            ...(onPick ? { class: 'pick' } : {}),
          }),
        ),
      ),
    ),
    s('text', { x: PAD.left, y: H - 6 }, bars[0].label),
    bars.length > 1
      ? s('text', { x: W - PAD.right, y: H - 6, 'text-anchor': 'end' }, bars[bars.length - 1].label)
      : null,
  );
  if (onPick)
    svg.addEventListener('click', (e) => {
      const label = (e.target as Element).closest('g[data-label]')?.getAttribute('data-label');
      if (label) onPick(label);
    });
  return h('figure', { class: 'fig' }, svg, groups.length > 1 ? legend(groups) : null);
}
