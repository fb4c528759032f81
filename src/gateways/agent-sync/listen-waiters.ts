import type { Timer } from '../../core/clock.js';
import type { MailboxAddress } from './mailbox-address.js';
import type { Reservation } from './reservation.js';

/** How a waiting listen ended: with mail, at its timeout (maybe with mail), or cancelled. */
export type WaitResult =
  | { readonly kind: 'done'; readonly reservation: Reservation | null; readonly isTimeout: boolean }
  | { readonly kind: 'cancelled' };

/** One parked listen. */
export interface Waiter {
  readonly address: MailboxAddress;
  timer: Timer | undefined;
  /** Settles the listen; later calls are ignored. */
  settle(result: WaitResult): void;
}

/** Parked listens, FIFO per mailbox. */
export class ListenWaiters {
  readonly #queues = new Map<string, Waiter[]>();

  /** Parks a listen on `address`; resolves when {@link Waiter.settle} is called. */
  park(address: MailboxAddress): { readonly waiter: Waiter; readonly result: Promise<WaitResult> } {
    let resolve: (r: WaitResult) => void = () => undefined;
    const result = new Promise<WaitResult>((r) => (resolve = r));
    let isSettled = false;
    const waiter: Waiter = {
      address,
      timer: undefined,
      settle: (r) => {
        if (isSettled) return;
        isSettled = true;
        waiter.timer?.cancel();
        this.remove(waiter);
        resolve(r);
      },
    };
    const queue = this.#queues.get(address.key) ?? [];
    queue.push(waiter);
    this.#queues.set(address.key, queue);
    return { waiter, result };
  }

  /** The oldest listen parked on the mailbox with this key. */
  oldest(key: string): Waiter | undefined {
    return this.#queues.get(key)?.[0];
  }

  /** True when a listen is parked for this key. */
  has(key: string): boolean {
    return this.#queues.has(key);
  }

  /** True while `waiter` is parked (not yet settled or removed). */
  isParked(waiter: Waiter): boolean {
    return this.#queues.get(waiter.address.key)?.includes(waiter) === true;
  }

  /** Addresses with parked listens. */
  addresses(): MailboxAddress[] {
    return [...this.#queues.values()].flatMap((q) => (q[0] === undefined ? [] : [q[0].address]));
  }

  /** Unparks a waiter without settling it. */
  remove(waiter: Waiter): void {
    const queue = this.#queues.get(waiter.address.key);
    if (queue === undefined) return;
    const index = queue.indexOf(waiter);
    if (index >= 0) queue.splice(index, 1);
    if (queue.length === 0) this.#queues.delete(waiter.address.key);
  }

  /** Cancels every parked listen. */
  cancelAll(): void {
    for (const queue of [...this.#queues.values()]) {
      for (const waiter of [...queue]) waiter.settle({ kind: 'cancelled' });
    }
  }
}
