import type { BusEvent, StoredEvent } from '../core/events.js';
import type { Envelope } from '../core/envelope.js';

/** Result of {@link Store.append}. `isDuplicate` is true when the mailbox already held this envelope id. */
export interface AppendResult {
  readonly seq: number;
  readonly isDuplicate: boolean;
}

/**
 * One claimed message. `deliveryId` is the lease handle (`<mailbox>:<envelopeId>:<seq>:<attempt>`, see
 * store/delivery-id.ts): it names exactly one delivery forever, so a holder whose lease expired and was
 * re-claimed — or whose message was dead-lettered and retried — cannot settle the newer delivery.
 * `envelope.attempt` counts deliveries including this one (1 on first delivery).
 */
export interface Delivery {
  readonly deliveryId: string;
  readonly mailbox: string;
  readonly envelope: Envelope;
  readonly leaseUntil: number;
}

/** Where a stored message stands. */
export type MessageState = 'ready' | 'delayed' | 'leased';

/** A message as seen by peek/list, without claiming it. */
export interface StoredMessage {
  readonly mailbox: string;
  readonly seq: number;
  readonly envelope: Envelope;
  readonly state: MessageState;
  /** When a delayed message becomes claimable, or when a lease ends. */
  readonly availableAt: number;
}

/** Counts for one mailbox. `total = ready + delayed + leased`. */
export interface MailboxCounts {
  readonly mailbox: string;
  readonly ready: number;
  readonly delayed: number;
  readonly leased: number;
  readonly total: number;
  readonly deadLetters: number;
}

/** A message moved out of its mailbox after it could not be handled. */
export interface DeadLetter {
  readonly mailbox: string;
  readonly envelope: Envelope;
  readonly reason: string;
  readonly deadAt: number;
}

/** One key-value entry. `revision` strictly increases with every change to the store's KV space. */
export interface KvEntry {
  readonly key: string;
  readonly value: unknown;
  readonly revision: number;
}

/** One change seen by {@link Store.kvWatch}; `value` is undefined for a delete. */
export interface KvChange {
  readonly op: 'put' | 'delete';
  readonly key: string;
  readonly value: unknown;
  readonly revision: number;
}

/** Options for a conditional KV write: 0 means "must not exist", n means "current revision is n". */
export interface KvWriteOptions {
  readonly expectedRevision?: number;
}

/**
 * The Store port: durable mailboxes with leases, key-value state with compare-and-set, and an
 * append-only event log. Every implementation passes `describeStoreConformance`.
 *
 * Time: the store reads its injected clock for lease and delay decisions. Names and envelopes arrive
 * already validated by the bus; the store still never builds a path or query from unchecked text.
 * Errors: `LEASE_EXPIRED` (the delivery's lease has passed or it was re-claimed), `NOT_FOUND` (no such
 * message or dead letter), `STORE_CONFLICT` (KV revision mismatch), `STORE_CLOSED` (after close).
 */
export interface Store extends AsyncDisposable {
  /** Short implementation name: `memory`, `sqlite`, `nats`. */
  readonly kind: string;

  /**
   * True when writes become durable in the order they were called: a crash never keeps a write and
   * loses one called before it (SQLite: one connection committing its queue in order; memory: nothing
   * is durable). False for NATS, where concurrent writes are independent requests. A caller that needs
   * "X is durable before anything I do later" may rely on this instead of waiting for X.
   */
  readonly writesInOrder: boolean;

  /**
   * Appends to a mailbox. Idempotent on (mailbox, envelope.id) while that message is live (ready, delayed,
   * leased) or dead-lettered: a repeat returns the original seq with `isDuplicate` and changes nothing.
   * Once acked or discarded, the id is forgotten and the same id appends a new message. Records
   * `message.sent` in the same transaction. `attempt` is stored as 0.
   */
  append(mailbox: string, envelope: Envelope): Promise<AppendResult>;

  /**
   * Claims the next claimable message: highest priority first, then lowest seq. Claimable means not
   * acked, not dead-lettered, its delay elapsed, and not leased (or its lease expired). Increments the
   * attempt count, leases it for `leaseMs`, records `message.claimed`. Resolves null when none is claimable.
   */
  claim(mailbox: string, options: { readonly leaseMs: number }): Promise<Delivery | null>;

  /** Removes the delivered message. Throws LEASE_EXPIRED or NOT_FOUND. */
  ack(deliveryId: string): Promise<void>;

  /**
   * Removes the message with this envelope id from `mailbox` when it is claimable now (see claim) — a
   * claim and its ack in one step, for a consumer that has already handed the message on and holds no
   * lease (agent_sync removes what a listen reply carried once the reply is written). Records
   * `message.acked`. Resolves true when it removed the message; false, changing nothing, when `mailbox`
   * holds no claimable message with that id (never sent, acked, leased by someone, delayed, or dead).
   */
  take(mailbox: string, envelopeId: string): Promise<boolean>;

  /** Ends the lease; the message becomes claimable again after `delayMs`. Throws LEASE_EXPIRED or NOT_FOUND. */
  nack(deliveryId: string, options: { readonly delayMs: number }): Promise<void>;

  /** Sets the lease to end `leaseMs` from now. Throws LEASE_EXPIRED or NOT_FOUND. */
  extend(deliveryId: string, options: { readonly leaseMs: number }): Promise<Delivery>;

  /**
   * Moves the delivered message to the dead letters of its mailbox with `reason`, recording
   * `message.dead_lettered`. Throws LEASE_EXPIRED or NOT_FOUND.
   */
  deadLetter(deliveryId: string, options: { readonly reason: string }): Promise<DeadLetter>;

  /** Messages of a mailbox in delivery order (priority, then seq), nothing claimed; all of them without `limit`. */
  peek(mailbox: string, options?: { readonly limit?: number }): Promise<StoredMessage[]>;

  /** Counts for one mailbox (all zero for a mailbox never used). */
  count(mailbox: string): Promise<MailboxCounts>;

  /** Counts for every mailbox that holds messages or dead letters, sorted by name. */
  listMailboxes(): Promise<MailboxCounts[]>;

  /**
   * The earliest time at which a delayed or leased message of `mailbox` becomes claimable without a new
   * write (a delay elapsing or a lease expiring), or null. It may lie in the past (due but not yet
   * claimed). The bus sets one timer from it instead of polling.
   */
  nextDueAt(mailbox: string): Promise<number | null>;

  /** Dead letters, oldest first, optionally of one mailbox. */
  listDeadLetters(options?: { readonly mailbox?: string; readonly limit?: number }): Promise<DeadLetter[]>;

  /**
   * Moves every dead letter with this envelope id back into its mailbox with attempt 0, recording
   * `message.requeued`. A requeued message gets a new seq: it goes to the back of its priority level.
   * Resolves the requeued letters; throws NOT_FOUND when there is none.
   */
  requeueDeadLetter(envelopeId: string): Promise<DeadLetter[]>;

  /**
   * Removes every dead letter with this envelope id (in every mailbox, as requeueDeadLetter finds them),
   * recording `message.discarded` for each. The id is forgotten: the same id appends a new message.
   * Resolves the removed letters; throws NOT_FOUND when there is none.
   */
  discardDeadLetter(envelopeId: string): Promise<DeadLetter[]>;

  /**
   * Calls `listener(mailbox)` when messages may have become claimable: after an append, nack or requeue
   * in this process, and (where the store can see them) after writes by other processes, then with
   * `null` meaning "any mailbox". Returns the unsubscribe function.
   */
  onAvailable(listener: (mailbox: string | null) => void): () => void;

  kvGet(key: string): Promise<KvEntry | null>;
  /** Writes a JSON-serialisable value; throws STORE_CONFLICT when `expectedRevision` does not match. */
  kvSet(key: string, value: unknown, options?: KvWriteOptions): Promise<KvEntry>;
  /** Deletes a key (no-op when absent and no revision is expected); throws STORE_CONFLICT on mismatch. */
  kvDelete(key: string, options?: KvWriteOptions): Promise<void>;
  /** Entries whose key starts with `prefix`, sorted by key. */
  kvList(prefix: string): Promise<KvEntry[]>;
  /**
   * Changes to keys starting with `prefix`, in revision order, made after the call (or after
   * `afterRevision` when given), until `signal` aborts; then the iterator ends without throwing.
   */
  kvWatch(
    prefix: string,
    options: { readonly signal: AbortSignal; readonly afterRevision?: number },
  ): AsyncIterable<KvChange>;

  /** Appends an event from a higher layer (escalation, task, agent) and resolves it with its cursor. */
  appendEvent(event: BusEvent): Promise<StoredEvent>;
  /** Events with cursor > `after` (default 0: from the start), oldest first, at most `limit`. */
  readEvents(options?: { readonly after?: number; readonly limit?: number }): Promise<StoredEvent[]>;
  /** Like readEvents, then every new event as it is appended, until `signal` aborts (then it ends). */
  followEvents(options: {
    readonly after?: number;
    readonly signal: AbortSignal;
  }): AsyncIterable<StoredEvent>;
  /** The cursor of the newest event, 0 when the log is empty. */
  lastEventCursor(): Promise<number>;

  /** Closes handles and timers. Idempotent; later calls reject with STORE_CLOSED. */
  close(): Promise<void>;
}
