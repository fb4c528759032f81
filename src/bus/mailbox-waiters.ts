import type { Clock, Timer } from '../core/clock.js';

interface Waiter {
  readonly wake: () => void;
}

/** Receivers of one mailbox that are claiming (not parked), and the notifications they missed. */
interface Busy {
  receivers: number;
  missed: number;
}

/**
 * Receivers parked on mailboxes. A notification wakes only the first waiter of a mailbox; a waiter that
 * then claims a message passes the baton to the next one, so N idle consumers cost one claim per
 * message instead of N (no thundering herd). Also keeps one "due" timer per mailbox for delays and
 * lease expiries, so nothing polls in-process.
 *
 * A receiver between its claim and its park is "busy" ({@link MailboxWaiters.enter}). A notification
 * that wakes nobody is not lost: it is counted as missed, and one busy receiver per missed notification
 * claims again instead of parking ({@link MailboxWaiters.takeMissed}). The count is capped at the busy
 * receivers and dropped when none is left, so receivers busy claiming are sent round once per message
 * that nobody was woken for, not once per message each, and a receiver arriving later never spins on
 * old notifications (its first claim sees what they were about).
 */
export class MailboxWaiters {
  readonly #clock: Clock;
  readonly #queues = new Map<string, Waiter[]>();
  readonly #dueTimers = new Map<string, { at: number; timer: Timer }>();
  readonly #busy = new Map<string, Busy>();

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

  /** A receiver of `mailbox` starts claiming; it ends with {@link leave} (then parks or returns). */
  enter(mailbox: string): void {
    const busy = this.#busy.get(mailbox);
    if (busy === undefined) this.#busy.set(mailbox, { receivers: 1, missed: 0 });
    else busy.receivers++;
  }

  /** Ends {@link enter}. Call it right before parking, in the same synchronous step. */
  leave(mailbox: string): void {
    const busy = this.#busy.get(mailbox);
    if (busy === undefined) return;
    busy.receivers--;
    busy.missed = Math.min(busy.missed, busy.receivers);
    if (busy.receivers <= 0) this.#busy.delete(mailbox);
  }

  /** True (once per missed notification) when a busy receiver must claim again instead of parking. */
  takeMissed(mailbox: string): boolean {
    const busy = this.#busy.get(mailbox);
    if (busy === undefined || busy.missed === 0) return false;
    busy.missed--;
    return true;
  }

  /** Wakes the first waiter of `mailbox`, or of every mailbox when `mailbox` is null. */
  notify(mailbox: string | null): void {
    if (mailbox === null) {
      for (const queue of [...this.#queues.values()]) queue[0]?.wake();
      for (const busy of this.#busy.values()) busy.missed = Math.min(busy.missed + 1, busy.receivers);
      return;
    }
    const first = this.#queues.get(mailbox)?.[0];
    if (first !== undefined) {
      first.wake();
      return;
    }
    const busy = this.#busy.get(mailbox);
    if (busy !== undefined) busy.missed = Math.min(busy.missed + 1, busy.receivers);
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
