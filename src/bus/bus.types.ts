import type { Envelope, EnvelopeInput } from '../core/envelope.js';
import type { BusEvent, StoredEvent } from '../core/events.js';
import type { DeadLetter, Delivery, MailboxCounts, Store, StoredMessage } from '../store/store.js';

/**
 * Key-value state with compare-and-set (phase, round, task rows), kept in the same store as the
 * mailboxes. Keys are validated (KV_KEY_INVALID); see Store for the semantics of each verb.
 */
export type KvState = Pick<Store, 'kvGet' | 'kvSet' | 'kvDelete' | 'kvList' | 'kvWatch'>;

/** Options for {@link Bus.receive}. */
export interface ReceiveOptions {
  /** How long to wait for a message; 0 returns at once. Default 30 s. */
  readonly timeoutMs?: number;
  /** Lease length for the claimed message; default from the bus config. */
  readonly leaseMs?: number;
  readonly signal?: AbortSignal;
}

/** Result of {@link Bus.send}. */
export interface SendResult {
  readonly envelope: Envelope;
  readonly isDuplicate: boolean;
}

/** What {@link Bus.nack} decided: retried after `delayMs`, or moved to the dead letters. */
export type NackOutcome =
  | { readonly outcome: 'retry'; readonly delayMs: number }
  | { readonly outcome: 'dead-lettered'; readonly deadLetter: DeadLetter };

/** How one delivery should be settled, as its handler decided. */
export type ConsumeVerdict =
  | { readonly kind: 'ack' }
  /** Give it back: the retry policy's backoff unless `delayMs`, dead-lettered once attempts are used up. */
  | { readonly kind: 'nack'; readonly reason?: string; readonly delayMs?: number }
  | { readonly kind: 'dead-letter'; readonly reason: string }
  /** Leave it leased: the lease runs out and the message is delivered again (stopping mid-work). */
  | { readonly kind: 'abandon' }
  /**
   * The handler settled the delivery itself (ack, nack, dead-letter through the bus), for work whose
   * settlement must happen in order with its own steps; the consumer only stops renewing the lease.
   */
  | { readonly kind: 'settled' };

/** What the consumer did with a delivery once its handler was done. */
export type Settlement =
  | { readonly kind: 'acked' }
  | { readonly kind: 'nacked'; readonly outcome: NackOutcome }
  | { readonly kind: 'dead-lettered'; readonly deadLetter: DeadLetter }
  | { readonly kind: 'abandoned' }
  /** The handler settled it itself (verdict `settled`); whether that worked is the handler's to know. */
  | { readonly kind: 'settled' }
  /** The lease was lost while the handler ran (extension refused, or settling it failed). */
  | { readonly kind: 'lost'; readonly error: unknown };

/** What a handler gets beside its delivery. */
export interface ConsumeContext {
  /** Aborts when the consumer stops or the delivery's lease is lost: the work should end. */
  readonly signal: AbortSignal;
}

/**
 * Handles one delivery and says how to settle it; resolving nothing acks. A throw nacks with the
 * error's message as reason — unless the context's signal has aborted, then the delivery is abandoned.
 */
export type ConsumeHandler = (
  delivery: Delivery,
  context: ConsumeContext,
) => Promise<ConsumeVerdict | undefined | void>;

/** Options of {@link Bus.consume}. */
export interface ConsumeOptions {
  /** Stops the consumer: no new claims; handlers running see their context signal abort. */
  readonly signal: AbortSignal;
  /**
   * Lease of each claim; the bus's default when left out. A function is asked before every receive,
   * for a lease length that can change while the consumer runs (settings reloaded).
   */
  readonly leaseMs?: number | (() => number);
  /**
   * Renew the lease every third of it while the handler runs, the interval kept between 10 ms and 60 s
   * (a sub-second lease is renewed in time, a long one at least every minute). Default true.
   */
  readonly autoExtend?: boolean;
  /** Deliveries handled at once. Default 1. */
  readonly concurrency?: number;
  /**
   * Awaited before each receive (in each of the `concurrency` loops), for a consumer that must not
   * claim now (a gate closed, the work taken elsewhere): resolves when the loop may receive. It gets the
   * stop signal and should resolve soon after it aborts; a rejection is logged and it is called again
   * a second later.
   */
  readonly beforeReceive?: (signal: AbortSignal) => Promise<void>;
  /** Called after each delivery is settled (errors it throws are logged). */
  readonly onSettled?: (delivery: Delivery, settlement: Settlement) => void | Promise<void>;
}

/**
 * "Mail may have arrived" for one mailbox, without claiming anything (see Bus.watchMail). Notifications
 * that come between two waits are kept, so check the mailbox, then wait, and nothing is missed.
 */
export interface MailWatch extends Disposable {
  /**
   * Resolves true once mail may have become claimable since the previous call (or since the watch was
   * made): a send, nack or requeue in this process, another process's write as the store notices it, or
   * the mailbox's next delay or lease ending. Resolves false after `timeoutMs` (default: never), when
   * `signal` aborts or when the watch is closed.
   */
  next(options?: { readonly timeoutMs?: number; readonly signal?: AbortSignal }): Promise<boolean>;
  close(): void;
}

/**
 * The bus: mailboxes with leases, retries with backoff and dead letters, over one Store.
 * Every name and envelope is validated here (MAILBOX_NAME_INVALID, ENVELOPE_INVALID) before the store
 * sees it. After close() every method rejects with BUS_CLOSED.
 */
export interface Bus extends AsyncDisposable {
  /** Whether the store makes writes durable in call order (see Store.writesInOrder). */
  readonly writesInOrder: boolean;
  /** Validates, fills defaults and appends to `input.to`. Idempotent on envelope id. */
  send(input: EnvelopeInput): Promise<SendResult>;
  /** Sends one envelope (same id) to each mailbox in `to`; resolves one result per mailbox. */
  broadcast(input: Omit<EnvelopeInput, 'to'>, to: readonly string[]): Promise<SendResult[]>;
  /**
   * Claims the next message of `mailbox`, waiting up to `timeoutMs`. Resolves null on timeout; rejects with
   * the signal's reason when aborted. A message past its maximum attempts is dead-lettered here (with an
   * `escalation` event) instead of being handed out.
   */
  receive(mailbox: string, options?: ReceiveOptions): Promise<Delivery | null>;
  ack(deliveryId: string): Promise<void>;
  /**
   * Removes the message `envelopeId` from `mailbox` if it can be claimed now, without a lease (see
   * Store.take). Resolves false when it could not (gone, leased by someone, delayed or dead). Rejects
   * MAILBOX_NAME_INVALID for a bad name.
   */
  take(mailbox: string, envelopeId: string): Promise<boolean>;
  /**
   * Gives a message back. Without `delayMs` the retry policy picks the delay (exponential backoff, full
   * jitter); when the attempts are used up the message is dead-lettered and an `escalation` event sent.
   */
  nack(
    deliveryId: string,
    options?: { readonly delayMs?: number; readonly reason?: string },
  ): Promise<NackOutcome>;
  extend(deliveryId: string, options?: { readonly leaseMs?: number }): Promise<Delivery>;
  deadLetter(deliveryId: string, reason: string): Promise<DeadLetter>;
  peek(mailbox: string, options?: { readonly limit?: number }): Promise<StoredMessage[]>;
  count(mailbox: string): Promise<MailboxCounts>;
  listMailboxes(): Promise<MailboxCounts[]>;
  listDeadLetters(options?: { readonly mailbox?: string; readonly limit?: number }): Promise<DeadLetter[]>;
  /**
   * Consumes `mailbox` until `options.signal` aborts or the bus closes (see bus/consumer.ts): claims
   * under a lease renewed while `handler` runs, and acks, nacks (retry policy), dead-letters or abandons
   * each delivery as the handler decides (or leaves it to a handler that settled it itself). Rejects
   * MAILBOX_NAME_INVALID at once for a bad name.
   */
  consume(mailbox: string, handler: ConsumeHandler, options: ConsumeOptions): Promise<void>;
  /**
   * Watches `mailbox` for mail that may have become claimable, for a consumer that takes messages its
   * own way (agent_sync's listens take by id). Close it when done. Rejects MAILBOX_NAME_INVALID.
   */
  watchMail(mailbox: string): MailWatch;
  /** Moves every dead letter with this envelope id back into its mailbox (attempt 0); NOT_FOUND when none. */
  retryDeadLetter(envelopeId: string): Promise<DeadLetter[]>;
  /** Deletes every dead letter with this envelope id, freeing the id; NOT_FOUND when none. */
  discardDeadLetter(envelopeId: string): Promise<DeadLetter[]>;
  /** Key-value state in the bus's store. */
  readonly kv: KvState;
  /** Appends an event from a higher layer (task, agent, team, gateway) to the event log. */
  publish(event: BusEvent): Promise<StoredEvent>;
  /** Stored events with cursor > `after` (default 0), oldest first, at most `limit`. */
  readEvents(options?: { readonly after?: number; readonly limit?: number }): Promise<StoredEvent[]>;
  /** The cursor of the newest stored event (0 when there is none): follow `events` from here for what comes next. */
  lastEventCursor(): Promise<number>;
  /** Stored events after `after`, then live ones until `signal` aborts. */
  events(options: { readonly after?: number; readonly signal: AbortSignal }): AsyncIterable<StoredEvent>;
  /** Stops waiting receives (they resolve null) and rejects new calls. Does not close the store. */
  close(): Promise<void>;
}
