import {
  cumulativeSeries,
  edgeAnchor,
  tickLabel,
  linearScale,
  timeTicks,
  valueTicks,
  type Series,
  type SeriesItem,
} from './chart-scale.js';
import { el, replaceChildren, svg } from './dom.js';
import { turnEnd } from './timeline-model.js';
import { formatClock, formatCount, formatUsd, hueOf } from './text-format.js';
import type { TurnSummary } from '../gateways/http/api-schemas.js';

const HEIGHT_PX = 150;
const MARGIN = { left: 52, right: 8, top: 8, bottom: 20 } as const;
const LEGEND_SHOWN = 8;

/** One of the four charts. */
interface ChartSpec {
  readonly id: string;
  readonly title: string;
  readonly keyOf: (t: TurnSummary) => string | undefined;
  readonly valueOf: (t: TurnSummary) => number;
  readonly format: (v: number) => string;
  readonly empty: string;
}

const tokens = (t: TurnSummary): number => t.usage.inputTokens + t.usage.outputTokens;
const CHARTS: readonly ChartSpec[] = [
  {
    id: 'chart-agent-tokens',
    title: 'Tokens per agent',
    keyOf: (t) => t.agent,
    valueOf: tokens,
    format: formatCount,
    empty: 'No turns yet.',
  },
  {
    id: 'chart-agent-cost',
    title: 'Cost per agent',
    keyOf: (t) => t.agent,
    valueOf: (t) => t.usage.costUsd,
    format: formatUsd,
    empty: 'No turns yet.',
  },
  {
    id: 'chart-run-tokens',
    title: 'Tokens per run',
    keyOf: (t) => t.run,
    valueOf: tokens,
    format: formatCount,
    empty: 'No run has turns yet.',
  },
  {
    id: 'chart-run-cost',
    title: 'Cost per run',
    keyOf: (t) => t.run,
    valueOf: (t) => t.usage.costUsd,
    format: formatUsd,
    empty: 'No run has turns yet.',
  },
];

function chart(
  spec: ChartSpec,
  series: readonly Series[],
  domain: readonly [number, number],
  widthPx: number,
): SVGElement {
  const w = Math.max(160, widthPx);
  const max = Math.max(0, ...series.map((s) => s.total));
  const yTicks = valueTicks(max, 4);
  const top = yTicks.at(-1) ?? 1;
  const x = linearScale(domain, [MARGIN.left, w - MARGIN.right]);
  const y = linearScale([0, top], [HEIGHT_PX - MARGIN.bottom, MARGIN.top]);
  const xTicks = timeTicks(domain[0], domain[1], Math.max(2, Math.floor(w / 110)));
  const step = (xTicks[1] ?? Infinity) - (xTicks[0] ?? 0);
  const summary = series
    .slice(0, LEGEND_SHOWN)
    .map((s) => `${s.key} ${spec.format(s.total)}`)
    .join(', ');
  return svg(
    'svg',
    {
      class: 'chart-svg',
      width: w,
      height: HEIGHT_PX,
      viewBox: `0 0 ${w} ${HEIGHT_PX}`,
      role: 'img',
      'aria-label': `${spec.title}, cumulative: ${summary}`,
    },
    ...yTicks.map((v) =>
      svg(
        'g',
        {},
        svg('line', { x1: MARGIN.left, x2: w - MARGIN.right, y1: y(v), y2: y(v), class: 'chart-grid' }),
        svg(
          'text',
          { x: MARGIN.left - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'chart-label' },
          spec.format(v),
        ),
      ),
    ),
    ...xTicks.map((t) =>
      svg(
        'text',
        {
          x: x(t),
          y: HEIGHT_PX - 5,
          'text-anchor': edgeAnchor(x(t) - MARGIN.left, w - MARGIN.left - MARGIN.right),
          class: 'chart-label',
        },
        tickLabel(t, step, formatClock),
      ),
    ),
    ...series.map((s, i) =>
      svg('polyline', {
        class: `chart-line line-${i % 4}`,
        points: [...s.points, { at: domain[1], value: s.total }]
          .map(
            (p) => `${x(Math.min(domain[1], Math.max(domain[0], p.at))).toFixed(1)},${y(p.value).toFixed(1)}`,
          )
          .join(' '),
        stroke: `hsl(${hueOf(s.key)} 60% 42%)`,
        fill: 'none',
      }),
    ),
  );
}

function legend(spec: ChartSpec, series: readonly Series[]): HTMLElement {
  return el(
    'ul',
    { class: 'legend' },
    ...series.slice(0, LEGEND_SHOWN).map((s, i) => {
      const swatch = el('span', { class: `swatch line-${i % 4}`, aria: { hidden: 'true' } });
      swatch.style.setProperty('--hue', String(hueOf(s.key)));
      return el(
        'li',
        {},
        swatch,
        el('span', { class: 'legend-key' }, s.key),
        el('b', {}, spec.format(s.total)),
      );
    }),
    series.length > LEGEND_SHOWN
      ? el('li', { class: 'muted' }, `and ${series.length - LEGEND_SHOWN} more`)
      : null,
  );
}

/** A chart's width in a grid of `repeat(auto-fit, minmax(300px, 1fr))` with 12 px gaps (charts.css). */
function chartWidth(boxPx: number): number {
  const gap = 12;
  const columns = Math.min(4, Math.max(1, Math.floor((boxPx + gap) / (300 + gap))));
  // Less each figure's padding and border (2 × 11 px).
  return Math.max(160, Math.floor((boxPx - gap * (columns - 1)) / columns) - 22);
}

/**
 * Cumulative tokens and cost per agent and per run over `domain`, as four small line charts (each
 * turn counts when it ends; a running turn with what it used so far). Each chart has a text legend
 * with the totals and a label that reads the totals out, so no line relies on its colour.
 */
export function renderCostCharts(
  box: HTMLElement,
  turns: readonly TurnSummary[],
  domain: readonly [number, number],
  nowMs: number,
): void {
  const width = chartWidth(box.clientWidth);
  replaceChildren(
    box,
    ...CHARTS.map((spec) => {
      const items: SeriesItem[] = turns
        .filter((t) => turnEnd(t, nowMs) >= domain[0])
        .map((t) => ({
          key: spec.keyOf(t),
          startedAt: t.startedAt,
          at: turnEnd(t, nowMs),
          value: spec.valueOf(t),
        }));
      const series = cumulativeSeries(items);
      return el(
        'figure',
        { class: 'chart', id: spec.id },
        el('figcaption', {}, spec.title),
        series.length === 0
          ? el('p', { class: 'empty-line' }, spec.empty)
          : chart(spec, series, domain, width),
        series.length === 0 ? null : legend(spec, series),
      );
    }),
  );
}
