import type { Envelope } from '../../core/envelope.js';
import { decodeEnvelope } from './sqlite-rows.js';

/** Envelopes remembered at most; the oldest entry goes first. */
const DEFAULT_CAPACITY = 4_096;

interface Entry {
  readonly text: string;
  /** As stored: attempt 0, headers frozen (every envelope handed out shares them). */
  readonly envelope: Envelope;
}

/**
 * Decoded envelopes of message rows, keyed by seq, so that claiming or peeking a message this
 * connection wrote or decoded before skips JSON.parse and schema validation. A hit needs the row's
 * stored text to equal the text the entry was made from, so the cache never hands out anything but
 * what decoding the row gives: a row changed by another process, by hand, or by a rolled-back write
 * whose seq was reused simply misses and is decoded (and validated) again.
 */
export class EnvelopeCache {
  readonly #entries = new Map<number, Entry>();
  readonly #capacity: number;

  constructor(capacity = DEFAULT_CAPACITY) {
    this.#capacity = capacity;
  }

  /**
   * Remembers that row `seq` was just written with `text`, the JSON of `envelope`, which the bus
   * validated (the Store contract). Keeps a copy shaped as decoding gives it: the schema's key order,
   * attempt 0, no key for an absent thread.
   */
  remember(seq: number, text: string, envelope: Envelope): void {
    const { id, from, to, type, priority, thread, headers, body, createdAt } = envelope;
    const copy: Envelope =
      thread === undefined
        ? { id, from, to, type, priority, headers: { ...headers }, body, createdAt, attempt: 0 }
        : { id, from, to, type, priority, thread, headers: { ...headers }, body, createdAt, attempt: 0 };
    this.#set(seq, text, copy);
  }

  /** The envelope row `seq` holds, with the live `attempt`; throws STORE_CORRUPT for a bad row. */
  decode(seq: number, text: string, attempt: number, where: string): Envelope {
    const entry = this.#entries.get(seq);
    if (entry !== undefined && entry.text === text) return { ...entry.envelope, attempt };
    const envelope = decodeEnvelope(text, attempt, where);
    this.#set(seq, text, { ...envelope, attempt: 0 });
    return envelope;
  }

  /** The remembered seqs, oldest first (for tests and diagnostics). */
  seqs(): number[] {
    return [...this.#entries.keys()];
  }

  /** Forgets row `seq` (it was deleted). */
  forget(seq: number): void {
    this.#entries.delete(seq);
  }

  #set(seq: number, text: string, envelope: Envelope): void {
    Object.freeze(envelope.headers);
    if (this.#entries.size >= this.#capacity && !this.#entries.has(seq)) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(seq, { text, envelope });
  }
}
