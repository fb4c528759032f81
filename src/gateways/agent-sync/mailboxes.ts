import { z } from 'zod';
import type { Bus, MailWatch } from '../../bus/bus.types.js';
import type { Logger } from '../../core/logger.js';
import { BusMailboxes } from './bus-mailboxes.js';
import type { MailboxAddress } from './mailbox-address.js';
import { itemEnvelope, type MailItem, type RenderedItem } from './mail-item.js';
import { PrivateMailboxes } from './private-mailboxes.js';
import type { Reservation } from './reservation.js';
import { SerialQueue } from '../../core/serial-queue.js';

const knownSchema = z.array(z.string());

/**
 * Every agent_sync mailbox, whether a bus mailbox or a gateway-private one, behind one interface. Also
 * remembers (in KV) which bus mailboxes this gateway ever wrote to, so a fresh start can empty them.
 */
export class AgentSyncMailboxes {
  readonly #bus: Bus;
  readonly #busBoxes: BusMailboxes;
  readonly #privateBoxes: PrivateMailboxes;
  readonly #knownKey: string;
  #known = new Set<string>();
  #knownRevision = 0;
  readonly #remembering = new SerialQueue();

  constructor(options: { readonly bus: Bus; readonly logger: Logger; readonly prefix: string }) {
    this.#bus = options.bus;
    this.#busBoxes = new BusMailboxes({ bus: options.bus, logger: options.logger });
    this.#privateBoxes = new PrivateMailboxes({ kv: options.bus.kv, prefix: `${options.prefix}/private` });
    this.#knownKey = `${options.prefix}/mailboxes`;
  }

  /** Loads the list of bus mailboxes written so far. */
  async load(): Promise<void> {
    const entry = await this.#bus.kv.kvGet(this.#knownKey);
    const parsed = knownSchema.safeParse(entry?.value ?? []);
    this.#known = new Set(parsed.success ? parsed.data : []);
    this.#knownRevision = entry?.revision ?? 0;
  }

  /** Appends one already rendered (and size-checked) item. */
  async enqueue(address: MailboxAddress, item: MailItem, rendered: RenderedItem): Promise<void> {
    if (address.kind === 'private') {
      await this.#privateBoxes.enqueue(address.digest, address.label, rendered);
      return;
    }
    if (!this.#known.has(address.mailbox)) await this.#remember(address.mailbox);
    await this.#busBoxes.enqueue(itemEnvelope(address.mailbox, item, rendered));
  }

  /** Messages queued for `address`, reserved ones included. */
  pending(address: MailboxAddress): Promise<number> {
    return address.kind === 'bus'
      ? this.#busBoxes.pending(address.mailbox)
      : this.#privateBoxes.pending(address.digest);
  }

  /** Reserves the head of the mailbox for one listen reply; null when nothing unreserved is queued. */
  async reserve(address: MailboxAddress): Promise<Reservation | null> {
    return address.kind === 'bus'
      ? this.#busBoxes.reserve(address.mailbox, address.key)
      : this.#privateBoxes.reserve(address.digest, address.key);
  }

  /** Watches a bus mailbox for mail (from other gateways or processes) a parked listen can take. */
  watchBus(mailbox: string): MailWatch {
    return this.#bus.watchMail(mailbox);
  }

  /** Empties `alsoBus` and every mailbox this gateway wrote to, and forgets them (fresh start). */
  async clear(alsoBus: readonly string[]): Promise<void> {
    for (const mailbox of new Set([...alsoBus, ...this.#known])) await this.#busBoxes.drain(mailbox);
    await this.#privateBoxes.clear();
    await this.#bus.kv.kvDelete(this.#knownKey);
    this.#known = new Set();
    this.#knownRevision = 0;
  }

  /** Adds a mailbox to the persisted list; one write at a time (sends to new names may overlap). */
  #remember(mailbox: string): Promise<void> {
    const write = async (): Promise<void> => {
      if (this.#known.has(mailbox)) return;
      const next = [...this.#known, mailbox];
      const written = await this.#bus.kv.kvSet(this.#knownKey, next, {
        expectedRevision: this.#knownRevision,
      });
      this.#known.add(mailbox);
      this.#knownRevision = written.revision;
    };
    return this.#remembering.run(write);
  }
}
