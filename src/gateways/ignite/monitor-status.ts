import { appendFile } from 'node:fs/promises';
import type { Timer } from '../../core/clock.js';
import { writeFileAtomic } from './mime/atomic-file.js';
import { formatIsoLocal } from './mime/mime-time.js';
import type { MonitorContext } from './monitor-context.js';

/** One queue's counts in `task_health.json` (delivered = delivered by this monitor since it started). */
export interface QueueCounts {
  readonly name: string;
  readonly pending: number;
  readonly processing: number;
  readonly retrying: number;
  readonly delivered: number;
}

/** Options of {@link MonitorStatus}. */
export interface MonitorStatusOptions {
  readonly ctx: MonitorContext;
  readonly resumeToken: string;
  readonly counts: () => QueueCounts[];
  readonly agents: () => Array<Record<string, unknown>>;
}

/**
 * The monitor's status files (spec/ignite.md 4.8, SHOULD): `queue_monitor_heartbeat.json` every heartbeat
 * interval, `task_health.json` every poll cycle, and a line in `queue_monitor_progress.log` every progress
 * interval. Write failures are logged, never thrown. `close()` cancels the timers after a final heartbeat.
 */
export class MonitorStatus {
  readonly #o: MonitorStatusOptions;
  readonly #timers = new Map<string, Timer>();
  #isClosed = false;

  constructor(options: MonitorStatusOptions) {
    this.#o = options;
  }

  start(): void {
    const s = this.#o.ctx.settings();
    this.#every('heartbeat', s.heartbeatIntervalMs, () => this.heartbeat());
    this.#every('health', s.pollIntervalMs, () => this.health());
    this.#every('progress', s.progressIntervalMs, () => this.progressLine());
    void this.heartbeat();
    void this.health();
  }

  #every(key: string, ms: number, fn: () => Promise<void>): void {
    const tick = (): void => {
      if (this.#isClosed) return;
      void fn();
      this.#timers.set(key, this.#o.ctx.clock.setTimer(tick, ms));
    };
    this.#timers.set(key, this.#o.ctx.clock.setTimer(tick, ms));
  }

  async #write(file: string, text: string, isAppend = false): Promise<void> {
    const path = this.#o.ctx.paths.stateFile(file);
    try {
      await (isAppend ? appendFile(path, text, { mode: 0o600 }) : writeFileAtomic(path, text));
    } catch (err) {
      this.#o.ctx.logger.warn({ file, err }, 'cannot write monitor status file');
    }
  }

  /** Writes the heartbeat now. */
  heartbeat(): Promise<void> {
    const { ctx, resumeToken } = this.#o;
    const body = {
      timestamp: formatIsoLocal(ctx.clock.now()),
      resume_token: resumeToken,
      session: ctx.settings().session,
    };
    return this.#write('queue_monitor_heartbeat.json', `${JSON.stringify(body)}\n`);
  }

  /** Writes task_health.json now. */
  health(): Promise<void> {
    const { ctx } = this.#o;
    const body = {
      generated_at: formatIsoLocal(ctx.clock.now()),
      session: ctx.settings().session,
      workspace_dir: ctx.workspace,
      agents: this.#o.agents(),
      queues: this.#o.counts(),
    };
    return this.#write('task_health.json', `${JSON.stringify(body, null, 2)}\n`);
  }

  /** Appends one progress line now. */
  progressLine(): Promise<void> {
    const total = { pending: 0, processing: 0, retrying: 0, delivered: 0 };
    for (const q of this.#o.counts()) {
      total.pending += q.pending;
      total.processing += q.processing;
      total.retrying += q.retrying;
      total.delivered += q.delivered;
    }
    const line = `${formatIsoLocal(this.#o.ctx.clock.now())} resume=${this.#o.resumeToken} pending=${total.pending} processing=${total.processing} retrying=${total.retrying} delivered=${total.delivered}\n`;
    return this.#write('queue_monitor_progress.log', line, true);
  }

  async close(): Promise<void> {
    if (this.#isClosed) return;
    this.#isClosed = true;
    for (const t of this.#timers.values()) t.cancel();
    await this.heartbeat();
  }
}
