import { LiveMailbox } from '../live-mailbox.js';
import type { DeadLetter, MailboxCounts } from '../store.js';

/** A dead letter plus its place in the global death order. */
export interface DeadRecord {
  readonly letter: DeadLetter;
  readonly seq: number;
  readonly order: number;
}

/** One mailbox of the memory store: its live messages and its dead letters by envelope id. */
export class MemoryMailbox extends LiveMailbox {
  readonly dead = new Map<string, DeadRecord>();

  get isEmpty(): boolean {
    return this.messages.size === 0 && this.dead.size === 0;
  }

  override counts(now: number): { -readonly [K in keyof MailboxCounts]: MailboxCounts[K] } {
    const counts = super.counts(now);
    counts.deadLetters = this.dead.size;
    return counts;
  }
}

/** A copy of a dead letter that shares nothing mutable with the store. */
export function copyDeadLetter(letter: DeadLetter): DeadLetter {
  return { ...letter, envelope: { ...letter.envelope, headers: { ...letter.envelope.headers } } };
}
