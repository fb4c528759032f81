import type { Bus } from '../../bus/bus.types.js';
import type { EnvelopeInput } from '../../core/envelope.js';
import type { Logger } from '../../core/logger.js';
import { envelopeItem } from './mail-item.js';
import { takeWithinBudget, type Reservation } from './reservation.js';

/** Lease taken while a fresh start drains a mailbox; each message is acked at once. */
const DRAIN_LEASE_MS = 60_000;
const FIRST_PEEK = 64;

/**
 * agent_sync mailboxes that are bus mailboxes. A listen reserves messages by id without claiming them
 * (so a reply that is never written costs no delivery attempt and nothing has to be given back); the
 * commit takes exactly the reserved ids out of the mailbox with {@link Bus.take}, all in one go, so a
 * store with group commit writes them in one transaction.
 */
export class BusMailboxes {
  readonly #bus: Bus;
  readonly #logger: Logger;
  readonly #reserved = new Map<string, Set<string>>();
  /** Per mailbox, the removals still running (see Reservation.commitsAlone). */
  readonly #removing = new Map<string, Set<Promise<void>>>();

  constructor(options: { readonly bus: Bus; readonly logger: Logger }) {
    this.#bus = options.bus;
    this.#logger = options.logger;
  }

  async enqueue(input: EnvelopeInput): Promise<void> {
    await this.#bus.send(input);
  }

  /** Messages in the mailbox, reserved ones included (0 for a mailbox never used; nothing is created). */
  async pending(mailbox: string): Promise<number> {
    const removing = this.#removing.get(mailbox);
    if (removing !== undefined) await Promise.all(removing);
    return (await this.#bus.count(mailbox)).total;
  }

  /** Reserves unreserved ready messages from the head within the listen budget; null when there are none. */
  async reserve(mailbox: string, mailboxKey: string): Promise<Reservation | null> {
    const reserved = this.#reserved.get(mailbox);
    let limit = FIRST_PEEK;
    for (;;) {
      const peeked = await this.#bus.peek(mailbox, { limit });
      const candidates = peeked
        .filter((m) => m.state === 'ready' && reserved?.has(m.envelope.id) !== true)
        .map((m) => ({ id: m.envelope.id, item: envelopeItem(m.envelope) }));
      const taken = takeWithinBudget(candidates);
      if (taken.length === candidates.length && peeked.length === limit) {
        limit *= 8;
        continue;
      }
      if (taken.length === 0) return null;
      const ids = taken.map((t) => t.id);
      const set = reserved ?? new Set<string>();
      for (const id of ids) set.add(id);
      this.#reserved.set(mailbox, set);
      return {
        mailboxKey,
        items: taken.map((t) => t.item),
        commit: () => this.#commit(mailbox, ids),
        // A later request's write can then not become durable before this removal (spec 4.5).
        commitsAlone: this.#bus.writesInOrder,
        release: () => Promise.resolve(this.#unreserve(mailbox, ids)),
      };
    }
  }

  /** Removes every message of `mailbox` that can be claimed now (for a fresh start). */
  async drain(mailbox: string): Promise<number> {
    let removed = 0;
    for (;;) {
      const delivery = await this.#bus.receive(mailbox, { timeoutMs: 0, leaseMs: DRAIN_LEASE_MS });
      if (delivery === null) return removed;
      await this.#bus.ack(delivery.deliveryId);
      removed++;
    }
  }

  /** Takes the ids out of the mailbox; never rejects (a failure is logged: see #take). */
  #commit(mailbox: string, ids: readonly string[]): Promise<void> {
    const removing = this.#removing.get(mailbox) ?? new Set<Promise<void>>();
    this.#removing.set(mailbox, removing);
    const removal = Promise.all(ids.map((id) => this.#take(mailbox, id))).then(() => {
      this.#unreserve(mailbox, ids);
      removing.delete(removal);
      if (removing.size === 0 && this.#removing.get(mailbox) === removing) this.#removing.delete(mailbox);
    });
    removing.add(removal);
    return removal;
  }

  async #take(mailbox: string, id: string): Promise<void> {
    try {
      if (!(await this.#bus.take(mailbox, id))) {
        // Another consumer of the bus mailbox claimed it after the reply was made: it is delivered twice.
        this.#logger.warn({ mailbox, messageId: id }, 'reserved message was taken by someone else');
      }
    } catch (err) {
      // The reply was written; a failed take only means the message may be delivered once more.
      this.#logger.warn({ mailbox, messageId: id, err }, 'could not remove a delivered message');
    }
  }

  #unreserve(mailbox: string, ids: readonly string[]): void {
    const set = this.#reserved.get(mailbox);
    if (set === undefined) return;
    for (const id of ids) set.delete(id);
    if (set.size === 0) this.#reserved.delete(mailbox);
  }
}
