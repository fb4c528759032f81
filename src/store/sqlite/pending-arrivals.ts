/**
 * Counts the writes still queued or running that may make messages claimable (appends, nacks and
 * requeues), per mailbox, so a claim can tell whether the committed state already answers it: when no
 * such write is pending for its mailbox and a lock-free read finds nothing claimable, running the claim
 * after the queued writes would find nothing either. A write counts until its promise settled, that is
 * until after its batch committed (or failed), so the answer errs only towards queueing the claim.
 */
export class PendingArrivals {
  readonly #byMailbox = new Map<string, number>();
  /** Writes whose mailbox is unknown until they run (requeue by envelope id). */
  #anywhere = 0;

  /** Whether a write that may make `mailbox` claimable is pending. */
  has(mailbox: string): boolean {
    return this.#anywhere > 0 || this.#byMailbox.has(mailbox);
  }

  /** Counts `write` against `mailbox` (null: any mailbox) until it settles; resolves as it does. */
  async track<T>(mailbox: string | null, write: Promise<T>): Promise<T> {
    this.#add(mailbox, 1);
    try {
      return await write;
    } finally {
      this.#add(mailbox, -1);
    }
  }

  #add(mailbox: string | null, delta: number): void {
    if (mailbox === null) {
      this.#anywhere += delta;
      return;
    }
    const count = (this.#byMailbox.get(mailbox) ?? 0) + delta;
    if (count === 0) this.#byMailbox.delete(mailbox);
    else this.#byMailbox.set(mailbox, count);
  }
}
