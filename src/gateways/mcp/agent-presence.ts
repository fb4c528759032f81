import type { AgentState, AgentUpdate } from '../../bus/agent-directory.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { SerialQueue } from '../../core/serial-queue.js';

/** The directory write the presence needs (the AgentDirectory satisfies it). */
export interface AgentStatusWriter {
  update(name: string, update: AgentUpdate): Promise<unknown>;
}

/** Options of {@link AgentPresence}. */
export interface AgentPresenceOptions {
  readonly agent: string;
  readonly directory: AgentStatusWriter;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * Keeps the directory row of an MCP agent in step with what its tools do: `waiting` while a receive
 * waits, `busy` (with `currentTask` = the message id) while it holds an unexpired lease, `idle`
 * otherwise, `offline` once the server stops. Directory writes are best effort: a failed write is
 * logged and never fails the tool that caused it. Writes are serialised so the last state wins.
 */
export class AgentPresence {
  readonly #options: AgentPresenceOptions;
  /** Leases this server handed out and has not seen acked: delivery id -> message id and lease end. */
  readonly #held = new Map<string, { readonly messageId: string; readonly leaseUntil: number }>();
  #waiting = 0;
  #isOffline = false;
  #written: string | undefined;
  readonly #queue = new SerialQueue();

  constructor(options: AgentPresenceOptions) {
    this.#options = options;
  }

  /** Registers the agent with protocol `mcp` and state `idle`. Rejects when the directory write fails. */
  async online(): Promise<void> {
    this.#isOffline = false;
    this.#written = 'idle:';
    await this.#options.directory.update(this.#options.agent, {
      protocol: 'mcp',
      state: 'idle',
      currentTask: null,
    });
  }

  /** A receive started waiting; call {@link receiveEnded} when it settles. */
  receiveStarted(): Promise<void> {
    this.#waiting += 1;
    return this.#refresh();
  }

  /** A receive settled, with the delivery it claimed (if any). */
  receiveEnded(
    delivery: { readonly deliveryId: string; readonly messageId: string; readonly leaseUntil: number } | null,
  ): Promise<void> {
    this.#waiting = Math.max(0, this.#waiting - 1);
    if (delivery !== null) this.#held.set(delivery.deliveryId, delivery);
    return this.#refresh();
  }

  /** A delivery was acked (or turned out to be gone). */
  settled(deliveryId: string): Promise<void> {
    this.#held.delete(deliveryId);
    return this.#refresh();
  }

  /** Marks the agent `offline`; later calls change nothing. Never rejects. */
  offline(): Promise<void> {
    this.#isOffline = true;
    return this.#write('offline', null);
  }

  #refresh(): Promise<void> {
    if (this.#isOffline) return Promise.resolve();
    const now = this.#options.clock.now();
    for (const [id, held] of this.#held) if (held.leaseUntil <= now) this.#held.delete(id);
    const latest = [...this.#held.values()].at(-1);
    if (latest !== undefined) return this.#write('busy', latest.messageId);
    return this.#write(this.#waiting > 0 ? 'waiting' : 'idle', null);
  }

  #write(state: AgentState, currentTask: string | null): Promise<void> {
    const key = `${state}:${currentTask ?? ''}`;
    if (key === this.#written) return this.#queue.idle();
    this.#written = key;
    const { agent, directory, logger } = this.#options;
    return this.#queue.run(async () => {
      try {
        await directory.update(agent, { state, currentTask });
      } catch (err) {
        logger.warn({ err, agentId: agent, state }, 'agent directory update failed');
      }
    });
  }
}
