import type { Clock } from '../../core/clock.js';
import type { Envelope } from '../../core/envelope.js';
import { SENT_BODY_CHARS, sentEvent, type BusEvent, type StoredEvent } from '../../core/events.js';
import { ChangeSignal } from '../change-signal.js';
import { followLog } from '../follow-log.js';
import { deepFreeze } from './deep-freeze.js';

const FOLLOW_BATCH = 100;
const FIRST_CAPACITY = 1_024;

/** How a slot of the log holds its event: built when read, or kept whole (`stored`). */
const Kind = {
  stored: 0,
  sent: 1,
  claimed: 2,
  acked: 3,
  nacked: 4,
  extended: 5,
  deadLettered: 6,
  requeued: 7,
  discarded: 8,
} as const;
type Kind = (typeof Kind)[keyof typeof Kind];

/** The message events a store records, with the values each needs. */
export type MessageEventKind = Exclude<Kind, 0>;
export { Kind as EventKind };

/**
 * The event log of the memory store: cursors start at 1 and strictly increase; the newest `retention`
 * events are kept. Events from callers are copied once, frozen and kept whole. The message events the
 * store records itself (one or two per message handled) are kept as a few values in parallel arrays —
 * the strings and the frozen envelope they name already exist — and built into frozen event objects
 * only when read, so recording them allocates nothing that must outlive the write. Readers get fresh
 * arrays of immutable events; nobody can change the log through them.
 */
export class MemoryEventLog {
  readonly #clock: Clock;
  readonly #retention: number;
  readonly #changes = new ChangeSignal();
  #capacity = 0;
  #kinds = new Uint8Array(0);
  #at = new Float64Array(0);
  #numbers = new Float64Array(0);
  #mailboxes: (string | undefined)[] = [];
  #ids: (string | undefined)[] = [];
  /** The envelope of a `sent`, the reason of a `deadLettered`, the whole event of a `stored`. */
  #refs: unknown[] = [];
  /** Cursor of the oldest kept event, and of the newest (0: none yet). */
  #first = 1;
  #last = 0;

  constructor(options: { clock: Clock; retention: number }) {
    this.#clock = options.clock;
    this.#retention = options.retention;
  }

  /** Appends a caller's event: copied once (the caller keeps its object), then frozen. */
  append(event: BusEvent): StoredEvent {
    // Copied before it takes a cursor: an event that cannot be copied leaves the log as it was.
    return this.#keep(structuredClone(event));
  }

  /** Records `message.sent` of `envelope` (frozen, the store's own) put into `mailbox`. */
  sent(mailbox: string, envelope: Envelope): void {
    if (envelope.body.length <= SENT_BODY_CHARS)
      this.#record(Kind.sent, mailbox, envelope.id, 0, 0, envelope);
    // The event keeps only the head of a long body: keep that copy, not the whole envelope.
    else this.#keep(sentEvent(mailbox, envelope));
  }

  /**
   * Records a message event: `first` is the attempt (claimed), the delay (nacked) or the lease end
   * (extended); `second` the lease end of a claim; `ref` the reason of a dead letter.
   */
  record(
    kind: MessageEventKind,
    mailbox: string,
    messageId: string,
    first = 0,
    second = 0,
    ref: unknown = null,
  ): void {
    this.#record(kind, mailbox, messageId, first, second, ref);
  }

  read(after: number, limit: number): StoredEvent[] {
    return this.#read(after, limit).items;
  }

  follow(options: {
    after: number;
    signal: AbortSignal;
    isClosed: () => boolean;
  }): AsyncIterable<StoredEvent> {
    return followLog({
      ...options,
      changes: this.#changes,
      read: (after) => this.#read(after, FOLLOW_BATCH),
    });
  }

  lastCursor(): number {
    return this.#last;
  }

  /** Wakes followers so they can notice the store closed. */
  wake(): void {
    this.#changes.notify();
  }

  /** Keeps `event` (an object of the log's own) whole: stamped with the next cursor and the time, frozen. */
  #keep(event: BusEvent): StoredEvent {
    const cursor = this.#next();
    const slot = cursor % this.#capacity;
    const at = this.#clock.now();
    // Object.assign, not `{ ...event, cursor, at }`: V8 takes a slow path when a spread clone gains keys.
    const stored = deepFreeze(Object.assign(event, { cursor, at })) as StoredEvent;
    this.#kinds[slot] = Kind.stored;
    this.#at[slot] = at;
    this.#refs[slot] = stored;
    this.#mailboxes[slot] = undefined;
    this.#ids[slot] = undefined;
    this.#changes.notify();
    return stored;
  }

  #record(kind: Kind, mailbox: string, messageId: string, first: number, second: number, ref: unknown): void {
    const cursor = this.#next();
    const slot = cursor % this.#capacity;
    this.#kinds[slot] = kind;
    this.#at[slot] = this.#clock.now();
    this.#numbers[2 * slot] = first;
    this.#numbers[2 * slot + 1] = second;
    this.#mailboxes[slot] = mailbox;
    this.#ids[slot] = messageId;
    this.#refs[slot] = ref;
    this.#changes.notify();
  }

  /** Takes the next cursor, making room for it (growing, or dropping the oldest event). */
  #next(): number {
    const cursor = this.#last + 1;
    if (cursor - this.#first >= this.#capacity) {
      if (this.#capacity < this.#retention) this.#grow();
      else {
        const oldest = this.#first % this.#capacity;
        this.#refs[oldest] = undefined;
        this.#mailboxes[oldest] = undefined;
        this.#ids[oldest] = undefined;
      }
    }
    if (cursor - this.#first >= this.#retention) this.#first = cursor - this.#retention + 1;
    this.#last = cursor;
    return cursor;
  }

  #grow(): void {
    const capacity = Math.min(this.#retention, Math.max(FIRST_CAPACITY, this.#capacity * 2));
    const kinds = new Uint8Array(capacity);
    const at = new Float64Array(capacity);
    const numbers = new Float64Array(2 * capacity);
    const mailboxes = new Array<string | undefined>(capacity);
    const ids = new Array<string | undefined>(capacity);
    const refs = new Array<unknown>(capacity);
    for (let cursor = this.#first; cursor <= this.#last; cursor++) {
      const from = cursor % this.#capacity;
      const to = cursor % capacity;
      kinds[to] = this.#kinds[from] ?? 0;
      at[to] = this.#at[from] ?? 0;
      numbers[2 * to] = this.#numbers[2 * from] ?? 0;
      numbers[2 * to + 1] = this.#numbers[2 * from + 1] ?? 0;
      mailboxes[to] = this.#mailboxes[from];
      ids[to] = this.#ids[from];
      refs[to] = this.#refs[from];
    }
    this.#capacity = capacity;
    this.#kinds = kinds;
    this.#at = at;
    this.#numbers = numbers;
    this.#mailboxes = mailboxes;
    this.#ids = ids;
    this.#refs = refs;
  }

  #read(after: number, limit: number): { items: StoredEvent[]; cursor: number } {
    const items: StoredEvent[] = [];
    let cursor = Math.max(after, this.#first - 1);
    while (cursor < this.#last && items.length < limit) items.push(this.#event(++cursor));
    return { items, cursor: Math.max(cursor, after) };
  }

  /** The frozen event at `cursor` (which is kept). */
  #event(cursor: number): StoredEvent {
    const slot = cursor % this.#capacity;
    const kind = this.#kinds[slot] as Kind;
    const ref = this.#refs[slot];
    if (kind === Kind.stored) return ref as StoredEvent;
    const at = this.#at[slot] ?? 0;
    const mailbox = this.#mailboxes[slot] ?? '';
    const messageId = this.#ids[slot] ?? '';
    const first = this.#numbers[2 * slot] ?? 0;
    let event: BusEvent;
    switch (kind) {
      case Kind.sent:
        event = sentEvent(mailbox, ref as Envelope);
        break;
      case Kind.claimed:
        event = {
          type: 'message.claimed',
          mailbox,
          messageId,
          attempt: first,
          leaseUntil: this.#numbers[2 * slot + 1] ?? 0,
        };
        break;
      case Kind.acked:
        event = { type: 'message.acked', mailbox, messageId };
        break;
      case Kind.nacked:
        event = { type: 'message.nacked', mailbox, messageId, delayMs: first };
        break;
      case Kind.extended:
        event = { type: 'message.lease_extended', mailbox, messageId, leaseUntil: first };
        break;
      case Kind.deadLettered:
        event = { type: 'message.dead_lettered', mailbox, messageId, reason: String(ref) };
        break;
      case Kind.requeued:
        event = { type: 'message.requeued', mailbox, messageId };
        break;
      default:
        event = { type: 'message.discarded', mailbox, messageId };
    }
    return Object.freeze(Object.assign(event, { cursor, at }));
  }
}
