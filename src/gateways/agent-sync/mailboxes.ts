import { z } from 'zod';
import type { Bus, KvState, MailWatch } from '../../bus/bus.types.js';
import type { StoredMessage } from '../../store/store.js';
import type { EnvelopeInput } from '../../core/envelope.js';
import { MusubiError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { SerialQueue } from '../../core/serial-queue.js';
import { type MailItem, type RenderedItem, envelopeItem, itemEnvelope } from './mail-item.js';
import type { MailboxAddress } from './mailbox-address.js';
import { ReplyBudget, type Reservation, takeWithinBudget } from './reservation.js';

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
  enqueue(address: MailboxAddress, item: MailItem, rendered: RenderedItem): Promise<void> {
    if (address.kind === 'private')
      return this.#privateBoxes.enqueue(address.digest, address.label, rendered);
    if (!this.#known.has(address.mailbox)) return this.#enqueueNew(address.mailbox, item, rendered);
    return this.#busBoxes.enqueue(itemEnvelope(address.mailbox, item, rendered), rendered);
  }

  /** Enqueues to a bus mailbox this gateway has not written to before, remembering it first. */
  async #enqueueNew(mailbox: string, item: MailItem, rendered: RenderedItem): Promise<void> {
    await this.#remember(mailbox);
    await this.#busBoxes.enqueue(itemEnvelope(mailbox, item, rendered), rendered);
  }

  /** Messages queued for `address`, reserved ones included. */
  pending(address: MailboxAddress): Promise<number> {
    return address.kind === 'bus'
      ? this.#busBoxes.pending(address.mailbox)
      : this.#privateBoxes.pending(address.digest);
  }

  /** Reserves the head of the mailbox for one listen reply; null when nothing unreserved is queued. */
  reserve(address: MailboxAddress): Promise<Reservation | null> {
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
/** Items remembered as rendered at send time at most (the oldest is forgotten first). */
const MAX_RENDERED = 8_192;
/** Mailboxes with no reserved ids (or no running removal) whose empty record is kept at most. */
const MAX_IDLE_MAILBOXES = 1_024;

/**
 * Removals of one mailbox still running. Each gets a ticket in start order; a waiter is woken once
 * every removal that was running when it came has finished (later ones do not hold it up). Kept after
 * the last one ends (see MAX_IDLE_MAILBOXES).
 */
interface Removals {
  running: number;
  nextTicket: number;
  waiters: { readonly before: number; remaining: number; readonly wake: () => void }[];
}

/**
 * A reservation of messages in a bus mailbox: {@link Reservation.commit} takes exactly its ids out of
 * the mailbox, {@link Reservation.release} makes them available to other listens again.
 */
class BusReservation implements Reservation {
  readonly #owner: BusMailboxes;
  readonly mailboxKey: string;
  readonly items: readonly RenderedItem[];
  readonly commitsAlone: boolean;
  readonly #mailbox: string;
  readonly #ids: readonly string[];

  constructor(
    owner: BusMailboxes,
    at: { readonly mailbox: string; readonly mailboxKey: string; readonly commitsAlone: boolean },
    ids: readonly string[],
    items: readonly RenderedItem[],
  ) {
    this.#owner = owner;
    this.#mailbox = at.mailbox;
    this.mailboxKey = at.mailboxKey;
    this.commitsAlone = at.commitsAlone;
    this.#ids = ids;
    this.items = items;
  }

  commit(): Promise<void> {
    return this.#owner.removeReserved(this.#mailbox, this.#ids);
  }

  release(): Promise<void> {
    this.#owner.unreserve(this.#mailbox, this.#ids);
    return Promise.resolve();
  }
}

/**
 * agent_sync mailboxes that are bus mailboxes. A listen reserves messages by id without claiming them
 * (so a reply that is never written costs no delivery attempt and nothing has to be given back); the
 * commit takes exactly the reserved ids out of the mailbox with {@link Bus.take}, all in one go, so a
 * store with group commit writes them in one transaction. What this gateway rendered when it sent a
 * message is remembered by envelope id, so a listen hands it out without rendering it again (a cache:
 * what the mailbox holds decides what is delivered).
 */
export class BusMailboxes {
  readonly #bus: Bus;
  readonly #logger: Logger;
  readonly #reserved = new Map<string, Set<string>>();
  /** Per mailbox, the removals still running (see Reservation.commitsAlone). */
  readonly #removing = new Map<string, Removals>();
  readonly #rendered = new Map<string, RenderedItem>();

  constructor(options: { readonly bus: Bus; readonly logger: Logger }) {
    this.#bus = options.bus;
    this.#logger = options.logger;
  }

  /** Sends one envelope; `rendered` is how a listen reply shows it (remembered for that). */
  enqueue(input: EnvelopeInput, rendered?: RenderedItem): Promise<void> {
    return this.#bus.send(input).then(({ envelope, isDuplicate }) => {
      if (rendered === undefined || isDuplicate) return;
      if (this.#rendered.size >= MAX_RENDERED) {
        for (const oldest of this.#rendered.keys()) {
          this.#rendered.delete(oldest);
          break;
        }
      }
      this.#rendered.set(envelope.id, rendered);
    });
  }

  /**
   * Messages in the mailbox, reserved ones included (0 for a mailbox never used; nothing is created).
   * Removals running when it is called are waited for, so a message whose reply was written is gone.
   */
  async pending(mailbox: string): Promise<number> {
    const removals = this.#removing.get(mailbox);
    if (removals !== undefined && removals.running > 0) {
      await new Promise<void>((wake) =>
        removals.waiters.push({ before: removals.nextTicket, remaining: removals.running, wake }),
      );
    }
    return (await this.#bus.count(mailbox)).total;
  }

  /** Reserves unreserved ready messages from the head within the listen budget; null when there are none. */
  reserve(mailbox: string, mailboxKey: string, limit = FIRST_PEEK): Promise<Reservation | null> {
    return this.#bus.peek(mailbox, { limit }).then((peeked) => {
      const picked = this.#pick(mailbox, peeked);
      // Everything peeked fitted and there may be more: look further.
      if (!picked.isFull && peeked.length === limit) return this.reserve(mailbox, mailboxKey, limit * 8);
      if (picked.ids.length === 0) return null;
      const reserved = this.#reservedIn(mailbox);
      for (const id of picked.ids) reserved.add(id);
      // A later request's write can then not become durable before this removal (spec 4.5).
      const at = { mailbox, mailboxKey, commitsAlone: this.#bus.writesInOrder };
      return new BusReservation(this, at, picked.ids, picked.items);
    });
  }

  /** The unreserved ready messages from the head of `peeked` that fit one listen reply. */
  #pick(
    mailbox: string,
    peeked: readonly StoredMessage[],
  ): { ids: string[]; items: RenderedItem[]; isFull: boolean } {
    const reserved = this.#reserved.get(mailbox);
    const budget = new ReplyBudget();
    const ids: string[] = [];
    const items: RenderedItem[] = [];
    for (const message of peeked) {
      const id = message.envelope.id;
      if (message.state !== 'ready' || reserved?.has(id) === true) continue;
      const item = this.#rendered.get(id) ?? envelopeItem(message.envelope);
      if (!budget.take(item.bytes)) return { ids, items, isFull: true };
      ids.push(id);
      items.push(item);
    }
    return { ids, items, isFull: false };
  }

  /**
   * The reserved ids of `mailbox`. An emptied set stays (emptying and making it again per listen would
   * churn the map); the empty ones are dropped once more than {@link MAX_IDLE_MAILBOXES} pile up.
   */
  #reservedIn(mailbox: string): Set<string> {
    let set = this.#reserved.get(mailbox);
    if (set === undefined) {
      if (this.#reserved.size >= MAX_IDLE_MAILBOXES) {
        for (const [name, ids] of this.#reserved) if (ids.size === 0) this.#reserved.delete(name);
      }
      set = new Set();
      this.#reserved.set(mailbox, set);
    }
    return set;
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

  /**
   * A reservation's commit: takes the ids out of the mailbox. Never rejects (a failure is logged:
   * see #take); until it has finished, the ids stay reserved and {@link BusMailboxes.pending} waits.
   */
  removeReserved(mailbox: string, ids: readonly string[]): Promise<void> {
    let removals = this.#removing.get(mailbox);
    if (removals === undefined) {
      if (this.#removing.size >= MAX_IDLE_MAILBOXES) {
        for (const [name, idle] of this.#removing) if (idle.running === 0) this.#removing.delete(name);
      }
      removals = { running: 0, nextTicket: 0, waiters: [] };
      this.#removing.set(mailbox, removals);
    }
    const ticket = removals.nextTicket++;
    removals.running++;
    // All takes at once: a store with group commit writes them in one transaction. #take never rejects.
    const taking =
      ids.length === 1
        ? this.#take(mailbox, ids[0] ?? '')
        : Promise.all(ids.map((id) => this.#take(mailbox, id)));
    const running = removals;
    return taking.then(() => {
      for (const id of ids) this.#rendered.delete(id);
      this.unreserve(mailbox, ids);
      this.#finished(running, ticket);
    });
  }

  /** A reservation's release: the ids may go to another listen again. */
  unreserve(mailbox: string, ids: readonly string[]): void {
    const set = this.#reserved.get(mailbox);
    if (set !== undefined) for (const id of ids) set.delete(id);
  }

  #finished(removals: Removals, ticket: number): void {
    removals.running--;
    if (removals.waiters.length > 0) {
      removals.waiters = removals.waiters.filter((waiter) => {
        if (ticket >= waiter.before || --waiter.remaining > 0) return true;
        waiter.wake();
        return false;
      });
    }
  }

  /** Takes one reserved message out; never rejects. */
  #take(mailbox: string, id: string): Promise<void> {
    return this.#bus.take(mailbox, id).then(
      (isTaken) => {
        // Another consumer of the bus mailbox claimed it after the reply was made: it is delivered twice.
        if (!isTaken)
          this.#logger.warn({ mailbox, messageId: id }, 'reserved message was taken by someone else');
      },
      (err: unknown) => {
        // The reply was written; a failed take only means the message may be delivered once more.
        this.#logger.warn({ mailbox, messageId: id, err }, 'could not remove a delivered message');
      },
    );
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
