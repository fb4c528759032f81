import type { RenderedItem } from './mail-item.js';

/** Messages set aside for one listen reply: visible to peek, invisible to other listens. */
export interface Reservation {
  /** The key of the mailbox address the items came from (for locking). */
  readonly mailboxKey: string;
  /** The reserved items, head of the mailbox first. */
  readonly items: readonly RenderedItem[];
  /**
   * Removes the items from the mailbox (after the reply was written). Run inside the command queue
   * unless `commitsAlone`.
   */
  commit(): Promise<void>;
  /**
   * True when commit needs no command lock: until it has finished the items stay reserved (no listen
   * hands them out again) and the mailbox's pending count waits for it, so later requests see the
   * removal without queueing behind it; and the store makes it durable before any write a later
   * request makes (Store.writesInOrder). Otherwise commit runs under the mailbox lock.
   */
  readonly commitsAlone: boolean;
  /** Puts the items back at the head, in order (the reply could not be written). Run inside the queue. */
  release(): Promise<void>;
}

/** Bytes a listen reply spends besides its items: `{"ok": true, "messages": [`, `], "timeout": false}\n`. */
export const LISTEN_REPLY_OVERHEAD_BYTES = 47;
/** The most a listen or get-discussion reply may take, including its `\n`. */
export const MAX_PAGED_REPLY_BYTES = 61_440;

/**
 * What one paged reply (a listen's messages, a page of the discussion) has left to spend on items, in
 * bytes: always at least one item (every item is at most 61,000 bytes, so one always fits), `", "`
 * between items, at most {@link MAX_PAGED_REPLY_BYTES} in all.
 */
export class ReplyBudget {
  #used: number;
  #count = 0;

  /** `overheadBytes`: what the reply spends besides its items (a listen reply's by default). */
  constructor(overheadBytes = LISTEN_REPLY_OVERHEAD_BYTES) {
    this.#used = overheadBytes;
  }

  /** Spends an item of `bytes` and returns true; false (nothing spent) when the reply has no room for it. */
  take(bytes: number): boolean {
    const cost = bytes + (this.#count > 0 ? 2 : 0);
    if (this.#count > 0 && this.#used + cost > MAX_PAGED_REPLY_BYTES) return false;
    this.#count++;
    this.#used += cost;
    return true;
  }
}

/** Picks items from the head while the listen reply stays within budget (see {@link ReplyBudget}). */
export function takeWithinBudget<T extends { readonly item: RenderedItem }>(candidates: readonly T[]): T[] {
  const budget = new ReplyBudget();
  const taken: T[] = [];
  for (const c of candidates) {
    if (!budget.take(c.item.bytes)) break;
    taken.push(c);
  }
  return taken;
}
