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
 * Picks items from the head while the listen reply stays within budget: always at least one (every item
 * is at most 61,000 bytes, so one always fits), `", "` between items.
 */
export function takeWithinBudget<T extends { readonly item: RenderedItem }>(candidates: readonly T[]): T[] {
  const taken: T[] = [];
  let used = LISTEN_REPLY_OVERHEAD_BYTES;
  for (const c of candidates) {
    const cost = c.item.bytes + (taken.length > 0 ? 2 : 0);
    if (taken.length > 0 && used + cost > MAX_PAGED_REPLY_BYTES) break;
    taken.push(c);
    used += cost;
  }
  return taken;
}
