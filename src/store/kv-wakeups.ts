import { ChangeSignal } from './change-signal.js';

/** One running kv watch: its prefix and the signal it waits on. */
interface Watch {
  readonly prefix: string;
  readonly changes: ChangeSignal;
}

/**
 * Wake-ups of kv watches by key prefix: a write of key k wakes only the watches whose prefix k starts
 * with. (One shared signal woke every watch on every write, and each woken watch read the change log
 * again: a yadon job keeps a watch on each of its task rows while it writes them, so its cost grew with
 * the square of the tasks in flight.) Each watch gets its own {@link ChangeSignal}; it is registered
 * while the watch runs.
 */
export class KvWakeups {
  readonly #watches = new Set<Watch>();

  /**
   * The signal for a watch of `prefix` and `activate`, which registers it and returns the release
   * (for followLog's `onActive`: it runs before the watch's first read, so no write is missed).
   */
  watch(prefix: string): { readonly changes: ChangeSignal; readonly activate: () => () => void } {
    const watch: Watch = { prefix, changes: new ChangeSignal() };
    return {
      changes: watch.changes,
      activate: () => {
        this.#watches.add(watch);
        return () => this.#watches.delete(watch);
      },
    };
  }

  /** After a write of `key`: wakes the watches it concerns. */
  changed(key: string): void {
    for (const watch of this.#watches) if (key.startsWith(watch.prefix)) watch.changes.notify();
  }

  /** After changes to keys nobody named (another process committed) or at close: wakes every watch. */
  wakeAll(): void {
    for (const watch of this.#watches) watch.changes.notify();
  }
}
