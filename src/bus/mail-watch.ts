import type { Clock, Timer } from '../core/clock.js';
import type { Store } from '../store/store.js';
import type { MailWatch } from './bus.types.js';

/**
 * The mail watches of one bus by mailbox, behind the bus's one store subscription: a notification
 * costs a lookup and the calls to that mailbox's watches, however many other mailboxes are watched
 * (a parked agent_sync listen holds a watch, so thousands may be open). `null` ("any mailbox", a commit
 * by another process) reaches every watch.
 */
export class MailWatchers {
  readonly #byMailbox = new Map<string, Set<() => void>>();

  /** Calls `onMail` on each notification for `mailbox` (or for any); returns the unsubscribe (idempotent). */
  add(mailbox: string, onMail: () => void): () => void {
    const entry = (): void => onMail();
    const set = this.#byMailbox.get(mailbox) ?? new Set();
    this.#byMailbox.set(mailbox, set);
    set.add(entry);
    return () => {
      set.delete(entry);
      if (set.size === 0 && this.#byMailbox.get(mailbox) === set) this.#byMailbox.delete(mailbox);
    };
  }

  notify(mailbox: string | null): void {
    if (mailbox !== null) {
      const set = this.#byMailbox.get(mailbox);
      if (set !== undefined) notifyAll(set);
      return;
    }
    for (const set of [...this.#byMailbox.values()]) notifyAll(set);
  }
}

/** Calls each watch of `set`; one added meanwhile waits for the next notification. */
function notifyAll(set: ReadonlySet<() => void>): void {
  if (set.size === 1) for (const onMail of set) onMail();
  else for (const onMail of [...set]) onMail();
}

/**
 * A {@link MailWatch} on one mailbox of `store`, told of mail through `watchers`. It subscribes to the store's notifications at once and
 * remembers one that comes while nobody waits, so a caller that checks the mailbox and then waits never
 * misses mail sent in between. Each wait also wakes at the mailbox's next due time (a delay or a lease
 * ending), read when the wait starts.
 */
export function createMailWatch(o: {
  readonly store: Store;
  readonly watchers: MailWatchers;
  readonly clock: Clock;
  readonly mailbox: string;
}): MailWatch {
  let isPending = false;
  let wake: (() => void) | undefined;
  let isClosed = false;
  const unsubscribe = o.watchers.add(o.mailbox, () => {
    isPending = true;
    wake?.();
  });

  const close = (): void => {
    if (isClosed) return;
    isClosed = true;
    unsubscribe();
    wake?.();
  };

  const next = async (options: { readonly timeoutMs?: number; readonly signal?: AbortSignal } = {}) => {
    const { signal } = options;
    const takePending = (): boolean => {
      const was = isPending;
      isPending = false;
      return was;
    };
    // Looked at again after the await below: a close or an abort may come while it runs.
    const isOver = (): boolean => isClosed || signal?.aborted === true;
    if (takePending()) return true;
    if (isOver()) return false;
    const now = o.clock.now();
    const deadline = now + (options.timeoutMs ?? Infinity);
    const dueAt = await o.store.nextDueAt(o.mailbox);
    if (takePending()) return true;
    if (isOver()) return false;
    // A due time already past was visible to the caller's own check: waiting on it would spin.
    const isDueFirst = dueAt !== null && dueAt > o.clock.now() && dueAt < deadline;
    const wakeAt = isDueFirst ? dueAt : deadline;
    return new Promise<boolean>((resolve) => {
      let timer: Timer | undefined;
      const finish = (result: boolean): void => {
        timer?.cancel();
        wake = undefined;
        signal?.removeEventListener('abort', onAbort);
        resolve(result);
      };
      const onAbort = (): void => finish(false);
      wake = () => finish(takePending());
      signal?.addEventListener('abort', onAbort, { once: true });
      if (wakeAt !== Infinity)
        timer = o.clock.setTimer(() => finish(isDueFirst || takePending()), wakeAt - o.clock.now());
    });
  };

  return { next, close, [Symbol.dispose]: close };
}
