import type { Bus } from '../../bus/bus.types.js';
import { isMusubiError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { Delivery } from '../../store/store.js';
import type { TaskRegistry } from '../../tasks/task-registry.js';
import type { Channel } from '../../teams/executor/channel.js';
import type { ExecutorTeam } from '../../teams/executor/executor-team.js';
import { nekoResultEnvelope, nekoTaskOf, originHeaders, RESULT_TYPE } from '../bridging/index.js';
import { channelAgentName } from './neko-events.js';

/** Collaborators of {@link NekoBusIntake}. */
export interface NekoBusIntakeOptions {
  readonly bus: Pick<Bus, 'consume' | 'send'>;
  readonly registry: Pick<TaskRegistry, 'onChange'>;
  readonly executor: Pick<ExecutorTeam, 'owner' | 'channels' | 'flags' | 'dispatch'>;
  readonly logger: Logger;
}

/**
 * Runs bus messages addressed to a channel's agent (`neko-<channel id>`, as the agent directory lists
 * channels) as N.E.K.O. tasks on that channel, and mails each task's outcome back to the sender once it
 * is terminal (bridging/neko-task.ts). Main hears about these tasks like any other. The registry is
 * watched from construction, so tasks the restart rules fail are answered too; `start()` receives from
 * the mailboxes of the channels configured then. A message is acked once its task exists (a crash in
 * between runs it twice) or once its refusal is sent. `close()` stops receiving and stops watching.
 */
export class NekoBusIntake {
  readonly #o: NekoBusIntakeOptions;
  readonly #stop = new AbortController();
  readonly #unwatch: () => void;
  readonly #loops: Promise<void>[] = [];

  constructor(options: NekoBusIntakeOptions) {
    this.#o = options;
    this.#unwatch = options.registry.onChange((change) => {
      if (change.task.owner !== options.executor.owner) return;
      const reply = nekoResultEnvelope(change);
      if (reply === null) return;
      options.bus
        .send(reply)
        .catch((err: unknown) =>
          options.logger.error({ err, taskId: change.task.id }, 'could not mail the task result back'),
        );
    });
  }

  /** Starts one receive loop per channel. Call once. */
  start(): void {
    for (const channel of this.#o.executor.channels) this.#loops.push(this.#run(channel));
  }

  /** Stops receiving (a message being dispatched finishes) and stops watching tasks. Idempotent. */
  async close(): Promise<void> {
    this.#stop.abort(new Error('N.E.K.O. bus intake stopping'));
    this.#unwatch();
    await Promise.all(this.#loops);
  }

  async #run(channel: Channel): Promise<void> {
    const mailbox = channelAgentName(channel.id);
    await this.#o.bus
      .consume(mailbox, (delivery) => this.#handle(channel, delivery), {
        signal: this.#stop.signal,
        onSettled: (delivery, settlement) => {
          if (settlement.kind === 'nacked')
            this.#o.logger.error({ messageId: delivery.envelope.id }, 'bus message not dispatched');
        },
      })
      .catch((err: unknown) => {
        if (!isMusubiError(err, 'BUS_CLOSED')) throw err;
      });
  }

  async #handle(channel: Channel, delivery: Delivery): Promise<void> {
    const envelope = delivery.envelope;
    const plan = nekoTaskOf(envelope, channel);
    const task = plan === null ? null : await this.#o.executor.dispatch(plan);
    if (task === null && envelope.type !== RESULT_TYPE) {
      await this.#o.bus.send({
        id: `nx-${envelope.id.slice(0, 100)}`,
        from: channelAgentName(channel.id),
        to: envelope.from,
        type: RESULT_TYPE,
        thread: envelope.id,
        headers: originHeaders('neko'),
        body: JSON.stringify({ status: 'refused', channel: channel.id, error: this.#refusal(channel, plan) }),
      });
    }
  }

  #refusal(channel: Channel, plan: unknown): string {
    const flags = this.#o.executor.flags;
    if (plan === null) return 'a plugin channel runs plugin entries: use POST /plugin/execute';
    if (!flags.state.analyzerEnabled) return 'Agent master switch is off';
    if (!flags.isGroupEnabled(channel.group)) return `${channel.group} is disabled`;
    return 'skipped as a duplicate of an active task';
  }
}
