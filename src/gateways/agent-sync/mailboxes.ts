import { z } from 'zod';
import type { Bus, KvState, MailWatch } from '../../bus/bus.types.js';
import type { EnvelopeInput } from '../../core/envelope.js';
import { MusubiError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { SerialQueue } from '../../core/serial-queue.js';
import { type MailItem, type RenderedItem, envelopeItem, itemEnvelope } from './mail-item.js';
import type { MailboxAddress } from './mailbox-address.js';
import { type Reservation, takeWithinBudget } from './reservation.js';

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

const boxSchema = z.strictObject({
  label: z.string(),
  nextSeq: z.number().int().nonnegative(),
  items: z.array(z.strictObject({ seq: z.number().int(), json: z.string(), bytes: z.number().int() })),
});
type Box = z.infer<typeof boxSchema>;

interface CachedBox {
  box: Box;
  revision: number;
  readonly reserved: Set<number>;
}

/**
 * Mailboxes for agent_sync names the bus cannot name (`"agent a"`, `5`, `null`): one KV value per name
 * under `<prefix>/<digest>`, holding the rendered items. Only this gateway reads or writes them. An
 * emptied mailbox's key is deleted, so unknown names never persist anything.
 */
export class PrivateMailboxes {
  readonly #kv: KvState;
  readonly #prefix: string;
  readonly #cache = new Map<string, CachedBox>();

  constructor(options: { readonly kv: KvState; readonly prefix: string }) {
    this.#kv = options.kv;
    this.#prefix = options.prefix;
  }

  async enqueue(digest: string, label: string, item: { json: string; bytes: number }): Promise<void> {
    const cached = await this.#load(digest, label, true);
    const box: Box = {
      label,
      nextSeq: cached.box.nextSeq + 1,
      items: [...cached.box.items, { seq: cached.box.nextSeq, ...item }],
    };
    await this.#write(digest, cached, box);
  }

  async pending(digest: string): Promise<number> {
    return (await this.#load(digest, '', false)).box.items.length;
  }

  async reserve(digest: string, mailboxKey: string): Promise<Reservation | null> {
    const cached = await this.#load(digest, '', false);
    const candidates = cached.box.items
      .filter((i) => !cached.reserved.has(i.seq))
      .map((i) => ({ seq: i.seq, item: { json: i.json, bytes: i.bytes } }));
    const taken = takeWithinBudget(candidates);
    if (taken.length === 0) return null;
    const seqs = new Set(taken.map((t) => t.seq));
    for (const seq of seqs) cached.reserved.add(seq);
    const unreserve = (): void => seqs.forEach((seq) => cached.reserved.delete(seq));
    return {
      mailboxKey,
      items: taken.map((t) => t.item),
      commit: async () => {
        unreserve();
        const now = await this.#load(digest, '', true);
        await this.#write(digest, now, { ...now.box, items: now.box.items.filter((i) => !seqs.has(i.seq)) });
      },
      commitsAlone: false,
      release: async () => unreserve(),
    };
  }

  /** Deletes every private mailbox (fresh start). */
  async clear(): Promise<void> {
    for (const entry of await this.#kv.kvList(`${this.#prefix}/`)) await this.#kv.kvDelete(entry.key);
    this.#cache.clear();
  }

  /** The box from cache or KV; an empty box is cached only when about to be written (`isWrite`). */
  async #load(digest: string, label: string, isWrite: boolean): Promise<CachedBox> {
    const cached = this.#cache.get(digest);
    if (cached !== undefined) return cached;
    const entry = await this.#kv.kvGet(`${this.#prefix}/${digest}`);
    let box: Box = { label, nextSeq: 0, items: [] };
    if (entry !== null) {
      const parsed = boxSchema.safeParse(entry.value);
      if (!parsed.success) throw new MusubiError('STORE_CORRUPT', `private mailbox ${digest} is not valid`);
      box = parsed.data;
    }
    const fresh: CachedBox = { box, revision: entry?.revision ?? 0, reserved: new Set() };
    if (entry !== null || isWrite) this.#cache.set(digest, fresh);
    return fresh;
  }

  async #write(digest: string, cached: CachedBox, box: Box): Promise<void> {
    const key = `${this.#prefix}/${digest}`;
    if (box.items.length === 0) {
      await this.#kv.kvDelete(key, { expectedRevision: cached.revision });
      cached.revision = 0;
    } else {
      cached.revision = (await this.#kv.kvSet(key, box, { expectedRevision: cached.revision })).revision;
    }
    cached.box = box;
    if (box.items.length === 0 && cached.reserved.size === 0) this.#cache.delete(digest);
  }
}
