// Small-multiple line plots as hand-written SVG (no chart library): one panel per curve, log x axis.

/** 100000 -> `100k`, 1000000 -> `1M`, else the number. */
export function formatCount(n: number): string {
  if (n >= 1e6 && n % 1e5 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 100 === 0) return `${n / 1e3}k`;
  return String(n);
}

/** `value` with `digits` decimals; NaN and infinities as words. */
export function fixed(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : String(value);
}

interface Series {
  readonly label: string;
  readonly points: readonly (readonly [number, number])[];
}

export interface Panel {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly Series[];
}

const PANEL_W = 400;
const PANEL_H = 260;
const COLUMNS = 2;
const HEADER_H = 48;
const PLOT = { left: 64, right: 16, top: 52, bottom: 46 };
const COLORS = ['#2563eb', '#dc2626', '#16a34a'];

function esc(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** 1, 2 or 5 times a power of ten, at least `raw`. */
function niceStep(raw: number): number {
  const power = 10 ** Math.floor(Math.log10(raw));
  return ([1, 2, 5, 10].find((m) => m * power >= raw) ?? 10) * power;
}

function formatValue(v: number): string {
  if (v >= 1_000) return `${fixed(v / 1_000, v % 1_000 === 0 ? 0 : 1)}k`;
  if (v >= 10 || Number.isInteger(v)) return String(Math.round(v));
  return v.toFixed(v >= 1 ? 1 : 2).replace(/\.?0+$/, '');
}

/** One panel at (ox, oy): log x axis (a size of 0 sits one decade left of the smallest size), linear y from 0. */
function renderPanel(panel: Panel, ox: number, oy: number): string[] {
  const xs = [...new Set(panel.series.flatMap((s) => s.points.map(([x]) => x)))].sort((a, b) => a - b);
  const ys = panel.series.flatMap((s) => s.points.map(([, y]) => y)).filter(Number.isFinite);
  const smallest = Math.min(...xs.filter((x) => x > 0));
  const logX = (x: number): number => (x > 0 ? Math.log10(x) : Math.log10(smallest) - 1);
  const lo = logX(xs[0] ?? 1) - 0.2;
  const hi = logX(xs.at(-1) ?? 10) + 0.2;
  const step = niceStep(Math.max(...ys, 1e-9) / 4);
  const yMax = step * Math.ceil((Math.max(...ys, 1e-9) * 1.15) / step);
  const left = ox + PLOT.left;
  const top = oy + PLOT.top;
  const width = PANEL_W - PLOT.left - PLOT.right;
  const height = PANEL_H - PLOT.top - PLOT.bottom;
  const px = (x: number): number => left + ((logX(x) - lo) / (hi - lo)) * width;
  const py = (y: number): number => top + height - (y / yMax) * height;
  const out = [
    `<text x="${ox + PANEL_W / 2}" y="${oy + 20}" text-anchor="middle" font-size="14" font-weight="600">${esc(panel.title)}</text>`,
    `<rect x="${left}" y="${top}" width="${width}" height="${height}" fill="none" stroke="#9ca3af"/>`,
  ];
  for (let y = 0; y <= yMax + step / 2; y += step) {
    out.push(
      `<line x1="${left}" x2="${left + width}" y1="${py(y)}" y2="${py(y)}" stroke="#e5e7eb"/>`,
      `<text x="${left - 6}" y="${py(y) + 4}" text-anchor="end" font-size="11" fill="#374151">${formatValue(y)}</text>`,
    );
  }
  for (const x of xs) {
    out.push(
      `<line x1="${px(x)}" x2="${px(x)}" y1="${top + height}" y2="${top + height + 5}" stroke="#6b7280"/>`,
      `<text x="${px(x)}" y="${top + height + 18}" text-anchor="middle" font-size="11" fill="#374151">${formatCount(x)}</text>`,
    );
  }
  out.push(
    `<text x="${left + width / 2}" y="${oy + PANEL_H - 8}" text-anchor="middle" font-size="12" fill="#111827">${esc(`${panel.xLabel} (log scale)`)}</text>`,
    `<text transform="translate(${ox + 16} ${top + height / 2}) rotate(-90)" text-anchor="middle" font-size="12" fill="#111827">${esc(panel.yLabel)}</text>`,
  );
  panel.series.forEach((series, i) => {
    const color = COLORS[i % COLORS.length] ?? '#000';
    const points = series.points.filter(([, y]) => Number.isFinite(y));
    out.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${points.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ')}"/>`,
    );
    for (const [x, y] of points) {
      // First series labelled above its points, the others below, unless that leaves the plot.
      const above = py(y) - 8;
      const below = py(y) + 16;
      const labelY = (i === 0 && above > top + 10) || below > top + height - 2 ? above : below;
      out.push(
        `<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3.5" fill="${color}"/>`,
        `<text x="${px(x).toFixed(1)}" y="${labelY.toFixed(1)}" text-anchor="middle" font-size="10" fill="${color}">${formatValue(y)}</text>`,
      );
    }
    // Legend: one line per series under the title.
    const lx = left + (i * width) / Math.max(1, panel.series.length);
    out.push(
      `<line x1="${lx}" x2="${lx + 16}" y1="${oy + 37}" y2="${oy + 37}" stroke="${color}" stroke-width="2"/>`,
      `<text x="${lx + 20}" y="${oy + 41}" font-size="11" fill="#111827">${esc(series.label)}</text>`,
    );
  });
  return out;
}

export function renderPlot(panels: readonly Panel[], caption: string): string {
  const rows = Math.ceil(panels.length / COLUMNS);
  const width = PANEL_W * COLUMNS;
  const height = HEADER_H + rows * PANEL_H;
  const body = panels.flatMap((panel, i) =>
    renderPanel(panel, (i % COLUMNS) * PANEL_W, HEADER_H + Math.floor(i / COLUMNS) * PANEL_H),
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif">`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="16" font-weight="700">musubi cost curve (SQLite store)</text>`,
    `<text x="${width / 2}" y="40" text-anchor="middle" font-size="11" fill="#4b5563">${esc(caption)}</text>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}
