import type { Clock, Timer } from '../core/clock.js';

interface Waiter {
  readonly wake: () => void;
}

/**
 * Receivers parked on mailboxes. A notification wakes only the first waiter of a mailbox; a waiter that
 * then claims a message passes the baton to the next one, so N idle consumers cost one claim per
 * message instead of N (no thundering herd). Also keeps one "due" timer per mailbox for delays and
 * lease expiries, so nothing polls in-process.
 */
export class MailboxWaiters {
  readonly #clock: Clock;
  readonly #queues = new Map<string, Waiter[]>();
  readonly #dueTimers = new Map<string, { at: number; timer: Timer }>();
  // Notification counters close the race between "claim found nothing" and "park": a receiver reads
  // the version before claiming and parks only if no notification arrived in between.
  readonly #versions = new Map<string, number>();
  #globalVersion = 0;

  constructor(options: { readonly clock: Clock }) {
    this.#clock = options.clock;
  }

  /**
   * Parks until woken, until `deadline`, or until `signal` aborts. Resolves `true` when woken by a
   * notification, `false` at the deadline; rejects with the signal's reason on abort.
   */
  wait(mailbox: string, deadline: number, signal: AbortSignal | undefined): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const queue = this.#queues.get(mailbox) ?? [];
      this.#queues.set(mailbox, queue);
      const settle = (): void => {
        timer.cancel();
        signal?.removeEventListener('abort', onAbort);
        const index = queue.indexOf(waiter);
        if (index >= 0) queue.splice(index, 1);
        if (queue.length === 0 && this.#queues.get(mailbox) === queue) this.#queues.delete(mailbox);
      };
      const waiter: Waiter = {
        wake: () => {
          settle();
          resolve(true);
        },
      };
      const onAbort = (): void => {
        settle();
        reject(signal?.reason);
      };
      queue.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      // Timers fire asynchronously, so `settle` never sees `timer` before this line runs.
      const timer = this.#clock.setTimer(() => {
        settle();
        resolve(false);
      }, deadline - this.#clock.now());
    });
  }

  /** A number that changes whenever `mailbox` (or every mailbox) is notified. */
  version(mailbox: string): number {
    const own = this.#versions.get(mailbox);
    if (own === undefined) this.#versions.set(mailbox, 0);
    return (own ?? 0) + this.#globalVersion;
  }

  /** Wakes the first waiter of `mailbox`, or of every mailbox when `mailbox` is null. */
  notify(mailbox: string | null): void {
    if (mailbox === null) this.#globalVersion++;
    else {
      const own = this.#versions.get(mailbox);
      if (own !== undefined) this.#versions.set(mailbox, own + 1);
    }
    if (mailbox !== null) {
      this.#queues.get(mailbox)?.[0]?.wake();
      return;
    }
    for (const queue of [...this.#queues.values()]) queue[0]?.wake();
  }

  /** True when someone is parked on `mailbox`. */
  hasWaiters(mailbox: string): boolean {
    return (this.#queues.get(mailbox)?.length ?? 0) > 0;
  }

  /** Makes sure a notification fires for `mailbox` at time `at` (keeps only the earliest). */
  scheduleDue(mailbox: string, at: number): void {
    const existing = this.#dueTimers.get(mailbox);
    if (existing !== undefined && existing.at <= at) return;
    existing?.timer.cancel();
    const timer = this.#clock.setTimer(() => {
      this.#dueTimers.delete(mailbox);
      this.notify(mailbox);
    }, at - this.#clock.now());
    this.#dueTimers.set(mailbox, { at, timer });
  }

  /** Wakes every waiter (they re-check and see the bus closed) and cancels every timer. */
  close(): void {
    for (const { timer } of this.#dueTimers.values()) timer.cancel();
    this.#dueTimers.clear();
    for (const queue of [...this.#queues.values()]) for (const waiter of [...queue]) waiter.wake();
  }
}
