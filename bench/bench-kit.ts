import { readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBus } from '../src/bus/bus.js';
import type { Bus } from '../src/bus/bus.types.js';
import type { Clock } from '../src/core/clock.js';
import { createIdGenerator } from '../src/core/ids.js';
import { createSilentLogger } from '../src/core/logger.js';
import type { Store } from '../src/store/store.js';

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

/**
 * Puts `section` (which starts with `heading`, a `## ` line) into bench/RESULTS.md: in place of the
 * section with that heading, up to the next `## `, or at the end when there is none yet.
 */
export function writeResultsSection(heading: string, section: string): void {
  const file = join(dirname(fileURLToPath(import.meta.url)), 'RESULTS.md');
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    text = ''; // no results file yet: this section starts it
  }
  const start = text.indexOf(heading);
  if (start < 0) text = `${text.trimEnd()}\n\n${section}`;
  else {
    const next = text.indexOf('\n## ', start + heading.length);
    text = `${text.slice(0, start)}${section}${next < 0 ? '' : `\n${text.slice(next + 1)}`}`;
  }
  writeFileSync(file, `${text.trimEnd()}\n`);
}

/** A bus on `store` with the settings every bench uses: 30 s leases, the default retry, no logging. */
export function benchBus(store: Store, clock: Clock): Bus {
  return createBus({
    store,
    clock,
    ids: createIdGenerator(clock),
    logger: createSilentLogger(),
    config: { leaseMs: 30_000, retry: { baseMs: 5_000, capMs: 300_000, maxAttempts: 3 } },
  });
}

/** CPU time (user + system) a process has used so far, in ms (Linux /proc; USER_HZ is 100). */
export function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11] ?? Number.NaN) + Number(fields[12] ?? Number.NaN)) * 10;
}

/** The machine's CPU time so far, in clock ticks (Linux /proc/stat): all of it, and the part stolen by the host. */
export function machineCpuTicks(): { readonly total: number; readonly steal: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '').trim().split(/\s+/).slice(1, 9);
  const ticks = fields.map(Number);
  return { total: ticks.reduce((a, b) => a + b, 0), steal: ticks[7] ?? 0 };
}

/**
 * The share of the machine's CPU time the host took (steal) since `since`, in percent: on a shared VM,
 * a row measured while it is high ran on less CPU than the others (compare rows with low steal).
 */
export function stealPercentSince(since: { readonly total: number; readonly steal: number }): number {
  const now = machineCpuTicks();
  const total = now.total - since.total;
  return total > 0 ? (100 * (now.steal - since.steal)) / total : 0;
}

/** VmHWM (peak) or VmRSS of a process, in MiB (Linux /proc). */
export function processMemoryMiB(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN) / 1024;
}

/** A TCP connection on 127.0.0.1 that sends lines and resolves their replies in order. */
export class LineConnection {
  readonly #socket: Socket;
  readonly #waiting: Array<(line: string) => void> = [];
  #buffer = '';

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.setNoDelay(true);
    socket.setEncoding('utf8');
    socket.on('error', () => undefined); // a reset while closing hundreds of sockets at once is expected
    socket.on('data', (chunk: string) => {
      this.#buffer += chunk;
      let nl = this.#buffer.indexOf('\n');
      while (nl >= 0) {
        this.#waiting.shift()?.(this.#buffer.slice(0, nl));
        this.#buffer = this.#buffer.slice(nl + 1);
        nl = this.#buffer.indexOf('\n');
      }
    });
  }

  static open(port: number): Promise<LineConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port }, () => resolve(new LineConnection(socket)));
      socket.once('error', reject);
    });
  }

  request(line: string): Promise<string> {
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
      this.#socket.write(`${line}\n`);
    });
  }

  close(): void {
    this.#socket.destroy();
  }
}
