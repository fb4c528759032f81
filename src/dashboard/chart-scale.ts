// Scales, ticks and series for the page's hand-drawn SVG charts. No DOM.

/** Maps a value from `domain` onto `range` linearly; an empty domain maps everything to the range start. */
export function linearScale(
  domain: readonly [number, number],
  range: readonly [number, number],
): (value: number) => number {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0;
  if (span === 0 || !Number.isFinite(span)) return () => r0;
  return (value) => r0 + ((value - d0) / span) * (r1 - r0);
}

/** The smallest 1, 2 or 5 × 10^k at or above `value` (a chart's top); 1 for zero or less. */
export function niceCeil(value: number): number {
  if (!(value > 0)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) {
    const candidate = step * magnitude;
    // Rounding keeps 0.3 from becoming 0.30000000000000004 and failing the comparison.
    if (candidate >= value * (1 - 1e-12)) return Number(candidate.toPrecision(12));
  }
  return 10 * magnitude;
}

/**
 * Value ticks from 0 on a nice step (1, 2 or 5 × 10^k, about `count` intervals) up to the first tick at
 * or above `max`; at least one interval.
 */
export function valueTicks(max: number, count = 4): number[] {
  const step = niceCeil(max / count);
  const intervals = Math.max(1, Math.ceil(max / step - 1e-9));
  return Array.from({ length: intervals + 1 }, (_, i) => Number((step * i).toPrecision(12)));
}

const TIME_STEPS_MS = [
  1_000, 5_000, 15_000, 30_000, 60_000, 300_000, 900_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000,
  43_200_000, 86_400_000,
];

/** How to label time ticks `stepMs` apart: with seconds below a minute. */
export function tickLabel(atMs: number, stepMs: number, clock: (atMs: number) => string): string {
  return stepMs < 60_000 ? clock(atMs) : clock(atMs).slice(0, 5);
}

/** Time ticks on whole steps (1 s to 1 d) between `startMs` and `endMs`, at most `maxTicks` of them. */
export function timeTicks(startMs: number, endMs: number, maxTicks: number): number[] {
  const span = endMs - startMs;
  if (!(span > 0) || maxTicks < 1) return [];
  const step =
    TIME_STEPS_MS.find((s) => span / s <= maxTicks) ?? Math.ceil(span / maxTicks / 86_400_000) * 86_400_000;
  const ticks: number[] = [];
  for (let t = Math.ceil(startMs / step) * step; t <= endMs; t += step) ticks.push(t);
  return ticks;
}

/** The anchor of an axis label at `atPx` on an axis `widthPx` long: labels at the edges grow inwards. */
export function edgeAnchor(atPx: number, widthPx: number): 'start' | 'middle' | 'end' {
  if (atPx < 20) return 'start';
  return atPx > widthPx - 20 ? 'end' : 'middle';
}

/** One point of a cumulative series. */
export interface SeriesPoint {
  readonly at: number;
  readonly value: number;
}

/** A cumulative total over time for one key (an agent, a run). */
export interface Series {
  readonly key: string;
  readonly points: readonly SeriesPoint[];
  readonly total: number;
}

/** What a series is built from: one contribution per item, counted when the item ended. */
export interface SeriesItem {
  readonly key: string | undefined;
  readonly startedAt: number;
  /** When the contribution is counted: the end, or the last sign of life of an item still running. */
  readonly at: number;
  readonly value: number;
}

/**
 * Cumulative totals per key, each starting at 0 when its first item started and stepping up as each
 * item ends; sorted by total, largest first. Items without a key are left out.
 */
export function cumulativeSeries(items: readonly SeriesItem[]): Series[] {
  const byKey = new Map<string, SeriesItem[]>();
  for (const item of items) {
    if (item.key === undefined) continue;
    const list = byKey.get(item.key) ?? [];
    list.push(item);
    byKey.set(item.key, list);
  }
  const series: Series[] = [];
  for (const [key, list] of byKey) {
    list.sort((a, b) => a.at - b.at);
    const first = Math.min(...list.map((i) => i.startedAt));
    let total = 0;
    const points: SeriesPoint[] = [{ at: Math.min(first, list[0]?.at ?? first), value: 0 }];
    for (const item of list) {
      total += item.value;
      points.push({ at: item.at, value: total });
    }
    series.push({ key, points, total });
  }
  return series.sort((a, b) => b.total - a.total || a.key.localeCompare(b.key));
}
