/**
 * A short memory of another process's Prometheus counters: samples of its `/metrics` text kept in a
 * ring, turned into per-second rates between consecutive samples. The operator console's Overview
 * reads the decision API's `tally_decisions_total` this way: no time-series database is needed for
 * "the last hour", and Grafana stays the place for longer ranges and fleets.
 */

/** One series of a sample: a metric's labels and its value. */
export interface SampledSeries {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface MetricSample {
  readonly atMs: number;
  readonly series: readonly SampledSeries[];
}

/** A rate series: `[epoch ms of the later sample, per-second rate since the one before]`. */
export interface RateSeries {
  readonly label: string;
  readonly points: readonly (readonly [number, number])[];
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of the named metrics in a Prometheus text exposition (comments and other metrics skipped). */
export function parseExposition(text: string, names: ReadonlySet<string>): SampledSeries[] {
  const out: SampledSeries[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (m === null || !names.has(m[1])) continue;
    const value = Number(m[3]);
    if (!Number.isFinite(value)) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL))
      labels[l[1]] = l[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1], labels, value });
  }
  return out;
}

/** The newest `capacity` samples, oldest first. */
export class SampleRing {
  private readonly samples: MetricSample[] = [];

  constructor(readonly capacity: number) {}

  push(sample: MetricSample): void {
    this.samples.push(sample);
    if (this.samples.length > this.capacity) this.samples.splice(0, this.samples.length - this.capacity);
  }

  get latest(): MetricSample | undefined {
    return this.samples.at(-1);
  }

  /**
   * Per-second rates of the counters `group` keeps (it names a series' group, or returns null to skip
   * it), summed per group. A counter that went down restarted (a process restart): its new value is
   * the increase. A group absent from a sample counts 0 there.
   */
  rates(group: (s: SampledSeries) => string | null): RateSeries[] {
    const totals = this.samples.map((sample) => {
      const byKey = new Map<string, { group: string; value: number }>();
      for (const s of sample.series) {
        const g = group(s);
        if (g !== null) byKey.set(seriesKey(s), { group: g, value: s.value });
      }
      return { atMs: sample.atMs, byKey };
    });
    const groups = new Map<string, [number, number][]>();
    for (let i = 1; i < totals.length; i++) {
      const [before, after] = [totals[i - 1], totals[i]];
      const seconds = (after.atMs - before.atMs) / 1000;
      if (seconds <= 0) continue;
      const increase = new Map<string, number>();
      for (const [key, now] of after.byKey) {
        const then = before.byKey.get(key)?.value ?? 0;
        const delta = now.value >= then ? now.value - then : now.value;
        increase.set(now.group, (increase.get(now.group) ?? 0) + delta);
      }
      for (const g of increase.keys()) if (!groups.has(g)) groups.set(g, []);
      for (const [g, points] of groups) points.push([after.atMs, (increase.get(g) ?? 0) / seconds]);
    }
    return [...groups]
      .map(([label, points]) => ({ label, points: fillFront(points, totals) }))
      .sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  }
}

/** A group first seen late gets zeros before it, so every series spans the same samples. */
function fillFront(points: [number, number][], totals: readonly { atMs: number }[]): [number, number][] {
  const times = totals.slice(1).map((t) => t.atMs);
  const missing = times.length - points.length;
  return missing > 0 ? [...times.slice(0, missing).map((t): [number, number] => [t, 0]), ...points] : points;
}

function seriesKey(s: SampledSeries): string {
  const labels = Object.keys(s.labels)
    .sort()
    .map((k) => `${k}=${s.labels[k]}`)
    .join(',');
  return `${s.name}{${labels}}`;
}
