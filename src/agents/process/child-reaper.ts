import { signalGroup } from './process-group.js';

/**
 * Kills agent process groups that are still running when the daemon exits. One `process.on('exit')`
 * hook is installed while at least one group is tracked and removed when the last run ends, so the
 * hook never outlives the runs and many concurrent runs add one listener, not one each.
 *
 * Limits: an `exit` hook runs on normal exit, `process.exit()` and after an uncaught exception; a
 * SIGKILL of the daemon cannot be intercepted. The hub's signal handlers call close() on runners first.
 */
export class ChildReaper {
  readonly #live = new Set<number>();
  readonly #onExit = (): void => {
    for (const pgid of this.#live) {
      try {
        signalGroup(pgid, 'SIGKILL');
      } catch {
        // Exiting anyway: a group we may not signal (EPERM) is beyond our reach.
      }
    }
  };

  /** Starts tracking `pgid`; the returned function stops tracking it (idempotent). */
  track(pgid: number): () => void {
    this.#live.add(pgid);
    if (this.#live.size === 1) process.on('exit', this.#onExit);
    return () => {
      if (!this.#live.delete(pgid)) return;
      if (this.#live.size === 0) process.removeListener('exit', this.#onExit);
    };
  }

  /** Process groups currently tracked. */
  liveGroups(): number[] {
    return [...this.#live];
  }
}
