import type { ConsumeVerdict } from '../../bus/bus.types.js';
import { isMusubiError } from '../../core/errors.js';
import { sleep } from '../../core/sleep.js';
import type { Delivery } from '../../store/store.js';
import { BodyFields } from './body-fields.js';
import { runTurn } from './delivery-turn.js';
import { handleFailure } from './failure-path.js';
import { materialiseForeign } from './foreign-delivery.js';
import { handOffDelivery } from './hand-off.js';
import { IgnitePaths } from './ignite-paths.js';
import type { LeaderGate } from './leader-gate.js';
import { updateStatusText } from './mime/mime-edit.js';
import { formatIsoLocal } from './mime/mime-time.js';
import { decideMirror, isFile } from './mirror-decision.js';
import type { MonitorContext } from './monitor-context.js';
import type { ProgressDisplay } from './progress-display.js';
import { claimByRename, editMessageFile, readMessageFile } from './queue-file-io.js';
import { FILE_HEADER } from './queue-mirror.js';
import type { SlotPool } from './slot-pool.js';
import { writeFileAtomic } from './mime/atomic-file.js';

/** handleFailure settles the bus message itself: nack, ack plus a re-send, or dead-letter (spec 4.6, 4.7). */
const SETTLED: ConsumeVerdict = { kind: 'settled' };

/** Options of {@link AgentWorker}. */
export interface AgentWorkerOptions {
  readonly ctx: MonitorContext;
  readonly agent: string;
  readonly slots: SlotPool;
  readonly gate: LeaderGate;
  readonly progress: ProgressDisplay;
}

/**
 * Delivers one agent's messages one at a time (spec/ignite.md 4.3-4.8) as a consumer of the agent's
 * bus mailbox: while the leader gate is open and the agent is not attached elsewhere it receives the
 * next mirror (priority, then queue order), decides from the file where it stands, claims it into
 * processed/ when a parallel slot is free, runs the turn under the consumer's renewed lease, and marks
 * it delivered (ack) or sends it down the retry path (which settles the bus message itself). `stop()`
 * stops receiving and waits for the running turn.
 */
export class AgentWorker {
  readonly agent: string;
  readonly #o: AgentWorkerOptions;
  readonly #stop = new AbortController();
  #loop: Promise<void> | undefined;
  #isBusy = false;
  #delivered = 0;

  constructor(options: AgentWorkerOptions) {
    this.#o = options;
    this.agent = options.agent;
  }

  /** True while a message of this agent is claimed (in flight). */
  get isBusy(): boolean {
    return this.#isBusy;
  }

  /** Messages delivered successfully since start. */
  get delivered(): number {
    return this.#delivered;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Stops claiming; resolves after the message in flight (if any) is settled. Idempotent. */
  async stop(): Promise<void> {
    this.#stop.abort(new Error('ignite worker stopping'));
    await this.#loop;
  }

  async #run(): Promise<void> {
    const { ctx } = this.#o;
    // One delivery at a time (spec 4.3), under a task_timeout lease read before every receive (SIGHUP
    // reloads it) and renewed every min(60 s, task_timeout/3) by the consumer (spec 4.5).
    await ctx.bus
      .consume(this.agent, (delivery, { signal }) => this.#handle(delivery, signal), {
        signal: this.#stop.signal,
        leaseMs: () => Math.ceil(ctx.settings().taskTimeoutMs),
        beforeReceive: (signal) => this.#waitUntilOurs(signal),
      })
      .catch((err: unknown) => {
        if (!isMusubiError(err, 'BUS_CLOSED'))
          ctx.logger.error({ agent: this.agent, err }, 'consumer failed');
      });
  }

  /**
   * Resolves once this worker may claim: the leader gate is open (spec 4.8) and the agent is not
   * attached through another gateway, or when `signal` aborts.
   */
  async #waitUntilOurs(signal: AbortSignal): Promise<void> {
    const { ctx, gate } = this.#o;
    for (;;) {
      await gate.waitOpen(signal);
      if (signal.aborted || !(await ctx.isAttachedElsewhere(this.agent))) return;
      // The gateway the agent is attached through takes its mail; look again a poll interval later.
      await sleep(ctx.clock, ctx.settings().pollIntervalMs, signal);
    }
  }

  async #handle(delivery: Delivery, signal: AbortSignal): Promise<ConsumeVerdict> {
    try {
      return await this.#route(delivery, signal);
    } catch (err) {
      this.#o.ctx.logger.error(
        { agent: this.agent, messageId: delivery.envelope.id, err },
        'delivery handling failed',
      );
      // Left leased, as after a crash: the lease runs out and the file decides at the next delivery.
      return { kind: 'abandon' };
    }
  }

  async #route(delivery: Delivery, signal: AbortSignal): Promise<ConsumeVerdict> {
    const { ctx } = this.#o;
    if (await ctx.isAttachedElsewhere(this.agent)) {
      await ctx.lane(this.agent, () => handOffDelivery(ctx, this.agent, delivery));
      return { kind: 'ack' };
    }
    const name = delivery.envelope.headers[FILE_HEADER];
    if (name === undefined) {
      await materialiseForeign(ctx, this.agent, delivery);
      return { kind: 'ack' };
    }
    try {
      IgnitePaths.queueFileName(name);
    } catch {
      ctx.logger.error({ agent: this.agent, file: name }, 'mirror names an unsafe file; dropped');
      return { kind: 'dead-letter', reason: 'unsafe ignite-file header' };
    }
    const decision = await ctx.lane(this.agent, () => decideMirror(ctx, this.agent, name, delivery));
    switch (decision.kind) {
      case 'settle':
        ctx.logger.info(
          { agent: this.agent, file: name, why: decision.why },
          'mirror settled without delivery',
        );
        ctx.mirror.settle(this.agent, name);
        return { kind: 'ack' };
      case 'wait':
        return { kind: 'nack', delayMs: Math.max(0, Math.ceil(decision.untilMs - ctx.clock.now())) };
      case 'expired':
        await ctx.lane(this.agent, () => handleFailure(ctx, this.agent, name, delivery, 'timeout'));
        return SETTLED;
      case 'deliver':
        return this.#deliver(name, delivery, signal);
    }
  }

  async #deliver(name: string, delivery: Delivery, signal: AbortSignal): Promise<ConsumeVerdict> {
    const { ctx, slots } = this.#o;
    let release: () => void;
    try {
      release = await slots.acquire(signal);
    } catch {
      // Stopping (or the lease lost) while waiting for a slot: give the message back untouched (it is
      // still in its queue).
      return { kind: 'nack', delayMs: 0 };
    }
    const path = `${ctx.paths.processed(this.agent)}/${name}`;
    this.#isBusy = true;
    try {
      const isClaimed = await ctx.lane(this.agent, () => this.#claim(name));
      if (!isClaimed) {
        ctx.logger.info(
          { agent: this.agent, file: name },
          'claim rename failed (taken by someone else); skipped',
        );
        ctx.mirror.settle(this.agent, name);
        return { kind: 'ack' };
      }
      ctx.publish('claimed', {
        agent: this.agent,
        file: name,
        messageId: delivery.envelope.id,
        attempt: delivery.envelope.attempt,
      });
      // Only progress_update has a side effect; the mirror already says which type the file has.
      if ((delivery.envelope.headers['ignite-type'] ?? delivery.envelope.type) === 'progress_update')
        await this.#sideEffects(path);
      // No signal: a running turn is finished even when the monitor stops (spec 4.8).
      const outcome = await runTurn(ctx, this.agent, path);
      return await ctx.lane(this.agent, async (): Promise<ConsumeVerdict> => {
        if (outcome !== 'ok') {
          await handleFailure(ctx, this.agent, name, delivery, outcome);
          return SETTLED;
        }
        await editMessageFile(path, (text) => updateStatusText(text, 'delivered')).catch(() => undefined);
        ctx.mirror.settle(this.agent, name);
        this.#delivered++;
        ctx.publish('delivered', { agent: this.agent, file: name, messageId: delivery.envelope.id });
        return { kind: 'ack' };
      });
    } finally {
      this.#isBusy = false;
      release();
    }
  }

  /** Moves the file into processed/ (if it is in the root) and marks it processing (spec 4.3, F3). */
  async #claim(name: string): Promise<boolean> {
    const { ctx } = this.#o;
    const root = ctx.paths.agentRoot(this.agent);
    const processed = ctx.paths.processed(this.agent);
    if (isFile(`${root}/${name}`)) {
      if (!(await claimByRename(root, processed, name))) return false;
    } else if (!isFile(`${processed}/${name}`)) return false;
    const processedAt = formatIsoLocal(ctx.clock.now());
    await editMessageFile(`${processed}/${name}`, (text) =>
      updateStatusText(text, 'processing', { processedAt }),
    ).catch((err: unknown) =>
      ctx.logger.warn(
        { agent: this.agent, file: name, err },
        'cannot mark the claimed file processing (not UTF-8?); delivering anyway',
      ),
    );
    return true;
  }

  async #sideEffects(path: string): Promise<void> {
    const { ctx, progress } = this.#o;
    const file = await readMessageFile(path).catch(() => null);
    if (file?.message.headers.get('X-IGNITE-Type') !== 'progress_update') return;
    const rendered = progress.render(
      new BodyFields(file.message.body),
      file.message.headers,
      ctx.clock.now(),
    );
    await writeFileAtomic(ctx.paths.stateFile('progress_update_latest.txt'), rendered.latestText).catch(
      () => undefined,
    );
    if (rendered.line !== null)
      ctx.onProgress({ agent: this.agent, line: rendered.line, isFinal: rendered.isFinal });
  }
}
