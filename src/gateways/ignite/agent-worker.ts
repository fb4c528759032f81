import { isMusubiError } from '../../core/errors.js';
import { sleep } from '../../core/sleep.js';
import type { Timer } from '../../core/clock.js';
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

/** How long one receive waits before the loop looks at its stop signal again. */
const RECEIVE_WAIT_MS = 30_000;

/** Options of {@link AgentWorker}. */
export interface AgentWorkerOptions {
  readonly ctx: MonitorContext;
  readonly agent: string;
  readonly slots: SlotPool;
  readonly gate: LeaderGate;
  readonly progress: ProgressDisplay;
}

/**
 * Delivers one agent's messages one at a time (spec/ignite.md 4.3-4.8): receives the next mirror from
 * the agent's bus mailbox (priority, then queue order), decides from the file where it stands, claims
 * it into processed/ when a parallel slot is free, runs the turn while renewing the lease, and marks
 * it delivered or sends it down the retry path. `stop()` stops receiving and waits for the running turn.
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
    const { ctx, gate } = this.#o;
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      await gate.waitOpen(signal);
      if (signal.aborted) break;
      if (await ctx.isAttachedElsewhere(this.agent)) {
        // The gateway the agent is attached through takes its mail; look again a poll interval later.
        await sleep(ctx.clock, ctx.settings().pollIntervalMs, signal);
        continue;
      }
      let delivery: Delivery | null = null;
      try {
        delivery = await ctx.bus.receive(this.agent, {
          timeoutMs: RECEIVE_WAIT_MS,
          leaseMs: Math.ceil(ctx.settings().taskTimeoutMs),
          signal,
        });
      } catch (err) {
        if (signal.aborted || isMusubiError(err, 'BUS_CLOSED')) break;
        ctx.logger.error({ agent: this.agent, err }, 'receive failed');
        await sleep(ctx.clock, 1_000, signal);
        continue;
      }
      if (delivery === null) continue;
      try {
        await this.#handle(delivery);
      } catch (err) {
        ctx.logger.error(
          { agent: this.agent, messageId: delivery.envelope.id, err },
          'delivery handling failed',
        );
      }
    }
  }

  #renewLease(delivery: Delivery): () => void {
    const { ctx } = this.#o;
    let timer: Timer | undefined;
    let isDone = false;
    const every = Math.max(10, Math.min(60_000, ctx.settings().taskTimeoutMs / 3));
    const tick = (): void => {
      void ctx.bus.extend(delivery.deliveryId, { leaseMs: Math.ceil(ctx.settings().taskTimeoutMs) }).then(
        () => undefined,
        (err: unknown) => ctx.logger.warn({ agent: this.agent, err }, 'lease renewal failed'),
      );
      if (!isDone) timer = ctx.clock.setTimer(tick, every);
    };
    timer = ctx.clock.setTimer(tick, every);
    return () => {
      isDone = true;
      timer?.cancel();
    };
  }

  async #handle(delivery: Delivery): Promise<void> {
    const { ctx } = this.#o;
    if (await ctx.isAttachedElsewhere(this.agent))
      return ctx.lane(this.agent, () => handOffDelivery(ctx, this.agent, delivery));
    const name = delivery.envelope.headers[FILE_HEADER];
    if (name === undefined) {
      await materialiseForeign(ctx, this.agent, delivery);
      return;
    }
    try {
      IgnitePaths.queueFileName(name);
    } catch {
      ctx.logger.error({ agent: this.agent, file: name }, 'mirror names an unsafe file; dropped');
      await ctx.bus.deadLetter(delivery.deliveryId, 'unsafe ignite-file header');
      return;
    }
    const stopRenewing = this.#renewLease(delivery);
    try {
      const decision = await ctx.lane(this.agent, () => decideMirror(ctx, this.agent, name, delivery));
      if (decision.kind === 'settle') {
        ctx.logger.info(
          { agent: this.agent, file: name, why: decision.why },
          'mirror settled without delivery',
        );
        await ctx.bus.ack(delivery.deliveryId).catch(() => undefined);
        ctx.mirror.settle(this.agent, name);
      } else if (decision.kind === 'wait') {
        await ctx.bus.nack(delivery.deliveryId, {
          delayMs: Math.max(0, Math.ceil(decision.untilMs - ctx.clock.now())),
        });
      } else if (decision.kind === 'expired') {
        await ctx.lane(this.agent, () => handleFailure(ctx, this.agent, name, delivery, 'timeout'));
      } else {
        await this.#deliver(name, delivery);
      }
    } finally {
      stopRenewing();
    }
  }

  async #deliver(name: string, delivery: Delivery): Promise<void> {
    const { ctx, slots } = this.#o;
    let release: () => void;
    try {
      release = await slots.acquire(this.#stop.signal);
    } catch {
      // Stopping while waiting for a slot: give the message back untouched (it is still in its queue).
      await ctx.bus.nack(delivery.deliveryId, { delayMs: 0 }).catch(() => undefined);
      return;
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
        await ctx.bus.ack(delivery.deliveryId).catch(() => undefined);
        ctx.mirror.settle(this.agent, name);
        return;
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
      const outcome = await runTurn(ctx, this.agent, path);
      await ctx.lane(this.agent, async () => {
        if (outcome !== 'ok') return handleFailure(ctx, this.agent, name, delivery, outcome);
        await editMessageFile(path, (text) => updateStatusText(text, 'delivered')).catch(() => undefined);
        await ctx.bus
          .ack(delivery.deliveryId)
          .catch((err: unknown) => ctx.logger.warn({ agent: this.agent, err }, 'ack after the lease ended'));
        ctx.mirror.settle(this.agent, name);
        this.#delivered++;
        ctx.publish('delivered', { agent: this.agent, file: name, messageId: delivery.envelope.id });
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
