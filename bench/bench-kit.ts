import { cpus } from 'node:os';

/** One row of a benchmark table. */
export interface BenchRow {
  readonly implementation: string;
  readonly [column: string]: string | number;
}

/** The machine line every table starts with: Node version, CPU, cores, date. */
export function machineLine(): string {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  return `node ${process.version} · ${cpu} · ${cpus().length} cores · ${new Date().toISOString().slice(0, 10)}`;
}

/** The value at percentile `p` (0..100) of an unsorted sample (nearest rank). */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** Tracks the peak resident set size while a workload runs. */
export function trackPeakRss(): { stop(): number } {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, process.memoryUsage.rss());
    },
  };
}

function cell(value: string | number): string {
  if (typeof value === 'string') return value;
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  return value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(value >= 10 ? 1 : 3);
}

/** Prints a Markdown table with a title and the machine line; returns the text too (for RESULTS.md). */
export function printTable(title: string, rows: readonly BenchRow[]): string {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const lines = [
    `### ${title}`,
    '',
    machineLine(),
    '',
    `| ${columns.join(' | ')} |`,
    `|${columns.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${columns.map((c) => cell(r[c] ?? '')).join(' | ')} |`),
    '',
  ];
  const text = lines.join('\n');
  console.log(text);
  return text;
}
