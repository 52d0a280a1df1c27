import uPlot from 'uplot';
import { h } from './dom.js';
import { exact, tick, timeTicks } from './format.js';

/**
 * Charts on uPlot (docs/adr/0010-console-charts-uplot.md): canvas drawing, axes, legend and cursor
 * come from the library; this module only maps the console's numbers onto it. Every chart keeps the
 * numbers it draws in `data-chart` (JSON: `x`, `series[].label`, `series[].values`, unstacked), which
 * the browser suite compares with the API, and every chart sits beside a table of the same numbers.
 */

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
/** A second cue besides colour on lines: every series its own dash. */
const DASHES: number[][] = [[], [6, 3], [2, 3], [8, 3, 2, 3]];
const FONT = '12px system-ui, sans-serif';
const HEIGHT = 240;
/** Whole-number steps for counts (a lag, a cost): never a tick at 0.5 of a decision. */
const COUNT_STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 1e6, 1e7, 1e8, 1e9,
];

export interface Series {
  readonly label: string;
  /** One value per x, in order (a missing sample or an empty bucket is 0, never left out). */
  readonly values: readonly number[];
}

interface Common {
  /** Read by screen readers, kept in `data-chart`, and shown above the chart unless `caption` is. */
  readonly title: string;
  /** What is shown above the chart instead of `title` (under a heading that already names it). */
  readonly caption?: string;
  /** The y axis' unit, on the axis and beside every number in the legend and tooltip. */
  readonly unit: string;
  readonly series: readonly Series[];
  /** Whole numbers (counts): integer ticks. Rates are not. */
  readonly counts?: boolean;
}

export interface TimeChartOptions extends Common {
  /** Epoch milliseconds, ascending. */
  readonly x: readonly number[];
  readonly kind: 'line' | 'bars';
  /**
   * Series that sum to a whole (decisions by outcome) are drawn stacked; others (what each policy
   * said, cost per policy: one decision counts under every policy that applied) side by side.
   */
  readonly stacked: boolean;
  /** A click on an x (a bucket) opens it. */
  readonly onPick?: (index: number) => void;
}

export interface CategoryChartOptions extends Common {
  readonly categories: readonly string[];
  /** What a category is (`policy`, `partition`…), named in the legend. */
  readonly categoryName: string;
}

function yAxis(unit: string, counts: boolean): uPlot.Axis {
  return {
    label: unit,
    labelFont: FONT,
    font: FONT,
    labelSize: 20,
    size: 56,
    stroke: '#1a1a1a',
    grid: { stroke: '#e3e3e3', width: 1 },
    ...(counts ? { incrs: COUNT_STEPS } : {}),
    values: (_u, splits) => splits.map(tick),
  };
}

function yScale(counts: boolean): uPlot.Scale {
  // From 0, to a little above the highest value; an all-zero chart still has a 0…1 axis (not 0…1.1).
  return {
    range: (_u, _min, max) => [0, max > 0 ? (counts ? Math.max(1, max * 1.1) : max * 1.1) : 1],
  };
}

/** The numbers at the cursor, exactly (the legend under the chart shows them too). */
function tooltip(label: (i: number) => string, raw: readonly Series[], unit: string): uPlot.Plugin {
  const tip = h('div', { class: 'u-tip', role: 'status', 'aria-live': 'off' });
  return {
    hooks: {
      init: (u) => {
        u.over.append(tip);
      },
      setCursor: (u) => {
        const i = u.cursor.idx;
        if (i === null || i === undefined || u.cursor.left === undefined || u.cursor.left < 0) {
          tip.style.display = 'none';
          return;
        }
        tip.replaceChildren(
          h('strong', {}, label(i)),
          ...raw.map((s) => h('div', {}, `${s.label}: ${exact(s.values[i] ?? 0)} ${unit}`)),
        );
        tip.style.display = 'block';
        const left = u.cursor.left;
        tip.style.left = `${left > u.over.clientWidth / 2 ? left - tip.offsetWidth - 12 : left + 12}px`;
        tip.style.top = '8px';
      },
    },
  };
}

/** Stacked drawing: each series up to the running sum, drawn topmost first so the lower ones show. */
function stack(series: readonly Series[]): number[][] {
  const sums: number[][] = [];
  series.forEach((s, k) => sums.push(s.values.map((v, i) => v + (k === 0 ? 0 : sums[k - 1][i]))));
  return sums;
}

/** Mounts a uPlot into a figure that follows its container's width (a phone or a 4-column grid). */
function mount(
  title: string,
  caption: string,
  opts: Omit<uPlot.Options, 'width' | 'height'>,
  data: uPlot.AlignedData,
  numbers: { x: readonly (number | string)[]; series: readonly Series[] },
): { figure: HTMLElement; u: uPlot } {
  const plot = h('div', {
    class: 'plot',
    role: 'img',
    'aria-label': `${title} (the table below has the numbers)`,
  });
  const figure = h(
    'figure',
    { class: 'fig', 'data-chart': JSON.stringify({ title, x: numbers.x, series: numbers.series }) },
    h('figcaption', {}, caption),
    plot,
  );
  const u = new uPlot({ ...opts, width: 600, height: HEIGHT }, data, plot);
  const resize = new ResizeObserver(() => {
    // A page redrawn (the Overview every 5 s) leaves this one: free its canvas and observer.
    if (!plot.isConnected) {
      resize.disconnect();
      u.destroy();
      return;
    }
    const width = Math.floor(plot.clientWidth);
    if (width > 0 && width !== u.width) u.setSize({ width, height: HEIGHT });
  });
  resize.observe(plot);
  return { figure, u };
}

/** A chart over time: every x shares the time axis (UTC), empty ones drawn as 0. */
export function timeChart(o: TimeChartOptions): HTMLElement {
  const counts = o.counts ?? false;
  const drawn = o.stacked ? stack(o.series) : o.series.map((s) => [...s.values]);
  // Stacked: topmost first, so each lower series is drawn over the one above it.
  const order = o.series.map((_, k) => k);
  if (o.stacked) order.reverse();
  const step = o.x.length > 1 ? (o.x[1] ?? 0) - (o.x[0] ?? 0) : 60_000;
  const bars = (k: number) =>
    o.stacked || o.series.length === 1
      ? uPlot.paths.bars?.({ size: [0.8, 48], align: 0 })
      : groupedBars(k, o.series.length, step);
  const when = (i: number) => utc(o.x[i] ?? 0);
  const opts: Omit<uPlot.Options, 'width' | 'height'> = {
    ms: 1,
    tzDate: (ts) => uPlot.tzDate(new Date(ts), 'Etc/UTC'),
    scales: { y: yScale(counts) },
    legend: { live: true },
    cursor: { drag: { x: false, y: false }, points: { size: 7 } },
    axes: [
      {
        font: FONT,
        stroke: '#1a1a1a',
        grid: { stroke: '#eeeeee', width: 1 },
        space: 70,
        size: 48,
        values: (_u, splits, _axis, _space, step) => timeTicks(splits, step),
      },
      yAxis(o.unit, counts),
    ],
    series: [
      { label: 'time (UTC)', value: (_u, v) => (v === null ? '—' : utc(v)) },
      ...order.map((k): uPlot.Series => {
        const colour = PALETTE[k % PALETTE.length];
        return {
          label: o.series[k].label,
          stroke: colour,
          width: 2,
          dash: o.kind === 'line' ? DASHES[k % DASHES.length] : undefined,
          fill: o.kind === 'bars' || o.stacked ? colour : undefined,
          paths: o.kind === 'bars' ? bars(k) : undefined,
          points: { show: o.kind === 'line' && o.x.length < 40 },
          // The legend shows the series' own number, not the running sum it is drawn at.
          value: (_u, _v, _s, i) => (i === null ? '—' : `${exact(o.series[k].values[i] ?? 0)} ${o.unit}`),
        };
      }),
    ],
    plugins: [tooltip(when, o.series, o.unit)],
  };
  const { figure, u } = mount(
    o.title,
    o.caption ?? o.title,
    opts,
    [[...o.x], ...order.map((k) => drawn[k])],
    {
      x: o.x,
      series: o.series,
    },
  );
  if (o.onPick) {
    const pick = o.onPick;
    figure.classList.add('pickable');
    u.over.addEventListener('click', () => {
      const i = u.cursor.idx;
      if (i !== null && i !== undefined && o.series.some((s) => (s.values[i] ?? 0) > 0)) pick(i);
    });
  }
  return figure;
}

/** Bars per category (a partition, a key, a reason); several series side by side. */
export function categoryChart(o: CategoryChartOptions): HTMLElement {
  const counts = o.counts ?? true;
  const n = Math.max(1, o.series.length);
  const opts: Omit<uPlot.Options, 'width' | 'height'> = {
    scales: { x: { time: false, range: () => [-0.5, o.categories.length - 0.5] }, y: yScale(counts) },
    legend: { live: true, show: n > 1 },
    cursor: { drag: { x: false, y: false }, points: { show: false } },
    axes: [
      {
        font: FONT,
        stroke: '#1a1a1a',
        grid: { show: false },
        splits: () => o.categories.map((_, i) => i),
        values: (_u, splits) => splits.map((i) => shorten(o.categories[i] ?? '')),
        rotate: o.categories.length > 3 ? -25 : 0,
        size: o.categories.length > 3 ? 70 : 40,
      },
      yAxis(o.unit, counts),
    ],
    series: [
      { label: o.categoryName, value: (_u, v) => (v === null ? '—' : (o.categories[v] ?? '')) },
      ...o.series.map((s, k): uPlot.Series => ({
        label: s.label,
        stroke: PALETTE[k % PALETTE.length],
        // Side by side: the second series outlined, so they differ by more than colour.
        fill: k % 2 === 1 ? '#ffffff' : PALETTE[k % PALETTE.length],
        width: 2,
        paths: groupedBars(k, n, 1),
        points: { show: false },
        value: (_u, _v, _s, i) => (i === null ? '—' : `${exact(s.values[i] ?? 0)} ${o.unit}`),
      })),
    ],
    plugins: [tooltip((i) => o.categories[i] ?? '', o.series, o.unit)],
  };
  return mount(
    o.title,
    o.caption ?? o.title,
    opts,
    [o.categories.map((_, i) => i), ...o.series.map((s) => [...s.values])],
    {
      x: o.categories,
      series: o.series,
    },
  ).figure;
}

/**
 * Bars of series `k` of `n` side by side around each x, together `0.8` of the step between xs (an
 * index axis: 1; a time axis: the bucket's length).
 */
function groupedBars(k: number, n: number, step: number): uPlot.Series.PathBuilder | undefined {
  const width = (0.8 * step) / n;
  const left = (u: uPlot) => (u.data[0] as number[]).map((x) => x - 0.4 * step + k * width);
  return uPlot.paths.bars?.({
    disp: {
      x0: { unit: 1, values: left },
      size: { unit: 1, values: (u: uPlot) => u.data[0].map(() => width) },
    },
  } as uPlot.Series.BarsPathBuilderOpts);
}

function utc(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

function shorten(label: string): string {
  return label.length > 18 ? `${label.slice(0, 17)}…` : label;
}
