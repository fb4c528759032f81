import type { Bus } from '../../bus/bus.types.js';
import type { EnvelopeInput } from '../../core/envelope.js';
import type { Logger } from '../../core/logger.js';
import type { Delivery } from '../../store/store.js';
import { envelopeItem } from './mail-item.js';
import { takeWithinBudget, type Reservation } from './reservation.js';

/** Lease taken while a reserved message is removed; it is acked at once, so this only bounds a crash. */
const COMMIT_LEASE_MS = 60_000;
const FIRST_PEEK = 64;

/**
 * agent_sync mailboxes that are bus mailboxes. A listen reserves messages by id without claiming them
 * (so a reply that is never written costs no delivery attempt); the commit claims and acks exactly the
 * reserved ids. A claim that returns a message reserved by another in-flight reply holds that delivery
 * for its own commit; anything else claimed on the way is given back at once.
 */
export class BusMailboxes {
  readonly #bus: Bus;
  readonly #logger: Logger;
  readonly #reserved = new Map<string, Set<string>>();
  readonly #held = new Map<string, Map<string, Delivery>>();

  constructor(options: { readonly bus: Bus; readonly logger: Logger }) {
    this.#bus = options.bus;
    this.#logger = options.logger;
  }

  async enqueue(input: EnvelopeInput): Promise<void> {
    await this.#bus.send(input);
  }

  /** Messages in the mailbox, reserved ones included (0 for a mailbox never used; nothing is created). */
  async pending(mailbox: string): Promise<number> {
    return (await this.#bus.count(mailbox)).total;
  }

  /** Bus mailboxes holding messages that can be claimed now (one query, whatever the mailbox count). */
  async withReadyMail(): Promise<Set<string>> {
    const counts = await this.#bus.listMailboxes();
    return new Set(counts.filter((c) => c.ready > 0).map((c) => c.mailbox));
  }

  /** Reserves unreserved ready messages from the head within the listen budget; null when there are none. */
  async reserve(mailbox: string): Promise<Omit<Reservation, 'mailboxKey'> | null> {
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
        items: taken.map((t) => t.item),
        commit: () => this.#commit(mailbox, ids),
        release: () => this.#release(mailbox, ids),
      };
    }
  }

  /** Removes every message of `mailbox` that can be claimed now (for a fresh start). */
  async drain(mailbox: string): Promise<number> {
    let removed = 0;
    for (;;) {
      const delivery = await this.#bus.receive(mailbox, { timeoutMs: 0, leaseMs: COMMIT_LEASE_MS });
      if (delivery === null) return removed;
      await this.#bus.ack(delivery.deliveryId);
      removed++;
    }
  }

  async #commit(mailbox: string, ids: readonly string[]): Promise<void> {
    const held = this.#held.get(mailbox) ?? new Map<string, Delivery>();
    this.#held.set(mailbox, held);
    try {
      for (const id of ids) {
        const delivery = held.get(id) ?? (await this.#claimUntil(mailbox, id, held));
        held.delete(id);
        if (delivery !== null) await this.#ack(delivery);
      }
    } finally {
      this.#unreserve(mailbox, ids);
      await this.#giveBackUnreserved(mailbox, held);
    }
  }

  async #release(mailbox: string, ids: readonly string[]): Promise<void> {
    this.#unreserve(mailbox, ids);
    const held = this.#held.get(mailbox);
    if (held !== undefined) await this.#giveBackUnreserved(mailbox, held);
  }

  async #claimUntil(mailbox: string, id: string, held: Map<string, Delivery>): Promise<Delivery | null> {
    for (;;) {
      const delivery = await this.#bus.receive(mailbox, { timeoutMs: 0, leaseMs: COMMIT_LEASE_MS });
      if (delivery === null) {
        this.#logger.warn({ mailbox, messageId: id }, 'reserved message was taken by someone else');
        return null;
      }
      if (delivery.envelope.id === id) return delivery;
      held.set(delivery.envelope.id, delivery);
    }
  }

  async #ack(delivery: Delivery): Promise<void> {
    try {
      await this.#bus.ack(delivery.deliveryId);
    } catch (err) {
      // The reply was written; a failed ack only means the message may be delivered once more.
      this.#logger.warn({ mailbox: delivery.mailbox, messageId: delivery.envelope.id, err }, 'ack failed');
    }
  }

  /** Returns held deliveries no in-flight reservation wants (delay 0: they keep their place). */
  async #giveBackUnreserved(mailbox: string, held: Map<string, Delivery>): Promise<void> {
    const reserved = this.#reserved.get(mailbox);
    for (const [id, delivery] of [...held]) {
      if (reserved?.has(id) === true) continue;
      held.delete(id);
      await this.#bus.nack(delivery.deliveryId, { delayMs: 0 }).catch((err: unknown) => {
        this.#logger.warn({ mailbox, messageId: id, err }, 'could not give a message back');
      });
    }
    if (held.size === 0) this.#held.delete(mailbox);
  }

  #unreserve(mailbox: string, ids: readonly string[]): void {
    const set = this.#reserved.get(mailbox);
    if (set === undefined) return;
    for (const id of ids) set.delete(id);
    if (set.size === 0) this.#reserved.delete(mailbox);
  }
}
