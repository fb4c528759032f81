import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { JsonObject, JsonValue } from '../../core/python/json-loads.js';
import type { CommandOutcome } from './command-context.js';
import type { CommandLocks } from './command-locks.js';
import { listenReply, listenTimeoutMs } from './listen-replies.js';
import { ListenWaiters, type WaitResult, type Waiter } from './listen-waiters.js';
import type { KnownAddress, MailboxAddress } from './mailbox-address.js';
import type { AgentSyncMailboxes } from './mailboxes.js';
import { errorReply } from './replies.js';
import type { Reservation } from './reservation.js';

/** A listen that waits for mail: settles when it got some, timed out or was cancelled. */
interface Parked {
  readonly parked: Promise<WaitResult>;
}

/** Collaborators of {@link ListenScheduler}. */
export interface ListenSchedulerOptions {
  readonly mailboxes: AgentSyncMailboxes;
  readonly locks: CommandLocks;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Records that `name` was seen (start and end of a listen). */
  readonly touch: (name: JsonValue) => void;
}

/**
 * The blocking `listen`: answers at once from queued mail, else parks the listen and serves parked
 * listens oldest first when mail arrives (or at their timeout). Mail handed to a reply is reserved and
 * removed only by {@link ListenScheduler.settle} after the reply was written.
 */
export class ListenScheduler {
  readonly #o: ListenSchedulerOptions;
  readonly #waiters = new ListenWaiters();
  /** Per bus mailbox key with parked listens: the watch serving them mail other gateways send. */
  readonly #watches = new Map<string, AbortController>();
  #isClosed = false;

  constructor(options: ListenSchedulerOptions) {
    this.#o = options;
  }

  /** True while a listen is parked on the mailbox with this key. */
  isWaiting(key: string): boolean {
    return this.#waiters.has(key);
  }

  /** Runs one listen for `address` (the caller has rejected unhashable names). Never rejects. */
  async listen(
    request: JsonObject,
    agent: JsonValue,
    known: KnownAddress,
    signal: AbortSignal,
  ): Promise<CommandOutcome> {
    const locks = this.#o.locks;
    if (!locks.tryHold(known.keys)) await locks.hold(known.keys);
    let start: CommandOutcome | Parked;
    try {
      start = await this.#start(request, agent, known.address, signal);
    } finally {
      locks.release(known.keys);
    }
    if ('kind' in start) return start;
    const result = await start.parked;
    if (result.kind === 'cancelled') return result;
    this.#o.touch(agent);
    const items = result.reservation?.items ?? [];
    return { kind: 'reply', text: listenReply(items, result.isTimeout), reservation: result.reservation };
  }

  /**
   * Hands queued mail to the oldest parked listens of `address` while there is mail. Call it holding
   * the address (a mailbox lock on its key, or the exclusive lock).
   */
  async serve(address: MailboxAddress): Promise<void> {
    while (this.#waiters.has(address.key)) {
      const reservation = await this.#o.mailboxes.reserve(address);
      if (reservation === null) return;
      const waiter = this.#waiters.oldest(address.key);
      if (waiter === undefined) return reservation.release();
      waiter.settle({ kind: 'done', reservation, isTimeout: false });
    }
  }

  /**
   * After a listen reply: removes its messages when the reply was written, else puts them back. Started
   * or queued synchronously, so requests arriving later see the removal (see Reservation.commitsAlone).
   */
  settle(reservation: Reservation, isWritten: boolean): Promise<void> {
    if (isWritten && reservation.commitsAlone) return reservation.commit().catch(this.#onSettleFailed);
    return this.#o.locks
      .mailboxes([reservation.mailboxKey], async () => {
        if (isWritten) return reservation.commit();
        await reservation.release();
        // Released mail may be exactly what a parked listen on that mailbox waits for.
        const waiting = this.#waiters.oldest(reservation.mailboxKey);
        if (waiting !== undefined) await this.serve(waiting.address);
      })
      .catch(this.#onSettleFailed);
  }

  readonly #onSettleFailed = (err: unknown): void => {
    this.#o.logger.error({ err }, 'could not settle a listen reservation');
  };

  /** Cancels every parked listen and stops the timer. Idempotent. */
  close(): void {
    this.#isClosed = true;
    for (const stop of this.#watches.values()) stop.abort();
    this.#watches.clear();
    this.#waiters.cancelAll();
  }

  /**
   * Answers from queued mail (serving older parked listens first), else parks the listen. Called
   * holding the mailbox's lock.
   */
  #start(
    request: JsonObject,
    agent: JsonValue,
    address: MailboxAddress,
    signal: AbortSignal,
  ): Promise<CommandOutcome | Parked> {
    this.#o.touch(agent);
    if (this.#waiters.has(address.key)) {
      return this.serve(address).then(() => this.#reserveOrPark(request, address, signal));
    }
    return this.#reserveOrPark(request, address, signal);
  }

  #reserveOrPark(
    request: JsonObject,
    address: MailboxAddress,
    signal: AbortSignal,
  ): Promise<CommandOutcome | Parked> {
    return this.#o.mailboxes.reserve(address).then((reservation) => {
      if (reservation !== null) return { kind: 'reply', text: listenReply(reservation.items), reservation };
      return this.#park(request, address, signal);
    });
  }

  #park(request: JsonObject, address: MailboxAddress, signal: AbortSignal): CommandOutcome | Parked {
    const timeout = listenTimeoutMs(request.get('timeout'));
    if ('error' in timeout) return { kind: 'reply', text: errorReply(timeout.error), reservation: null };
    if (timeout.ms <= 0) return { kind: 'reply', text: listenReply([], true), reservation: null };
    if (signal.aborted || this.#isClosed) return { kind: 'cancelled' };
    const { waiter, result } = this.#waiters.park(address);
    if (timeout.ms !== Infinity) {
      waiter.timer = this.#o.clock.setTimer(() => void this.#expire(waiter), timeout.ms);
    }
    const onAbort = (): void => waiter.settle({ kind: 'cancelled' });
    signal.addEventListener('abort', onAbort, { once: true });
    void result.then(() => {
      signal.removeEventListener('abort', onAbort);
      // The last listen on this mailbox is gone: nobody needs its watch any more.
      if (!this.#waiters.has(address.key)) this.#watches.get(address.key)?.abort();
    });
    if (address.kind === 'bus') this.#watchBusMailbox(address.key, address.mailbox);
    return { parked: result };
  }

  /** A listen's timeout: it takes whatever is unreserved at this instant. */
  #expire(waiter: Waiter): Promise<void> {
    return this.#o.locks.mailboxes([waiter.address.key], async () => {
      if (!this.#waiters.isParked(waiter)) return;
      const reservation = await this.#o.mailboxes.reserve(waiter.address);
      if (!this.#waiters.isParked(waiter)) return reservation?.release();
      waiter.settle({ kind: 'done', reservation, isTimeout: reservation === null });
    });
  }

  /**
   * While listens are parked on a bus mailbox, serves them the mail other gateways (or other processes)
   * put there, woken by the bus as it arrives. The first round serves at once: mail that came between
   * the listen's own check and the watch.
   */
  #watchBusMailbox(key: string, mailbox: string): void {
    if (this.#watches.has(key) || this.#isClosed) return;
    const stop = new AbortController();
    this.#watches.set(key, stop);
    const address: MailboxAddress = { kind: 'bus', key, mailbox };
    const watching = async (): Promise<void> => {
      using watch = this.#o.mailboxes.watchBus(mailbox);
      while (!stop.signal.aborted && this.#waiters.has(key)) {
        await this.#o.locks.mailboxes([key], () => this.serve(address));
        if (!this.#waiters.has(key)) return;
        await watch.next({ signal: stop.signal });
      }
    };
    void watching()
      .catch((err: unknown) => this.#o.logger.error({ err, mailbox }, 'watching a bus mailbox failed'))
      .finally(() => {
        if (this.#watches.get(key) === stop) this.#watches.delete(key);
      });
  }
}
