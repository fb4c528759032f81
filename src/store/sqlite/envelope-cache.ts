import { envelopeSchema, type Envelope } from '../../core/envelope.js';
import { decodeEnvelope } from './sqlite-rows.js';

/** Envelopes remembered at most; the oldest entry goes first. */
const DEFAULT_CAPACITY = 4_096;
/** Stored text (UTF-16 code units) remembered at most over all entries: about 16 MiB with the copies. */
const DEFAULT_MAX_CHARS = 4 * 1024 * 1024;
/** Rows with more text than this are always decoded: a few large bodies would crowd out everything. */
const MAX_ENTRY_CHARS = 16 * 1024;
/** The envelope's keys in the schema's order: decoding gives them in this order. */
const ENVELOPE_KEYS = Object.keys(envelopeSchema.shape) as Array<keyof Envelope>;

interface Entry {
  readonly text: string;
  /** As stored: attempt 0. Never handed out itself: hits get a copy (headers included). */
  readonly envelope: Envelope;
}

/**
 * Decoded envelopes of message rows, keyed by seq, so that claiming or peeking a message this
 * connection wrote or decoded before skips JSON.parse and schema validation. A hit needs the row's
 * stored text to equal the text the entry was made from, so the cache never hands out anything but
 * what decoding the row gives: a row changed by another process, by hand, or by a rolled-back write
 * whose seq was reused simply misses and is decoded (and validated) again. Bounded by entry count and
 * by total text; rows over 16 KiB of text are not remembered.
 */
export class EnvelopeCache {
  readonly #entries = new Map<number, Entry>();
  readonly #capacity: number;
  readonly #maxChars: number;
  #chars = 0;

  constructor(options: { readonly capacity?: number; readonly maxChars?: number } = {}) {
    this.#capacity = options.capacity ?? DEFAULT_CAPACITY;
    this.#maxChars = options.maxChars ?? DEFAULT_MAX_CHARS;
  }

  /**
   * Remembers that row `seq` was just written with `text`, the JSON of `envelope`, which the bus
   * validated (the Store contract). Keeps a copy shaped as decoding gives it: the schema's key order,
   * attempt 0, no key for an absent optional field.
   */
  remember(seq: number, text: string, envelope: Envelope): void {
    const copy: Record<string, unknown> = {};
    for (const key of ENVELOPE_KEYS) {
      const value = envelope[key];
      if (value !== undefined) copy[key] = value;
    }
    copy['headers'] = { ...envelope.headers };
    copy['attempt'] = 0;
    this.#set(seq, text, copy as unknown as Envelope);
  }

  /** The envelope row `seq` holds, with the live `attempt`; throws STORE_CORRUPT for a bad row. */
  decode(seq: number, text: string, attempt: number, where: string): Envelope {
    const entry = this.#entries.get(seq);
    if (entry !== undefined && entry.text === text) {
      return { ...entry.envelope, headers: { ...entry.envelope.headers }, attempt };
    }
    const envelope = decodeEnvelope(text, attempt, where);
    this.#set(seq, text, { ...envelope, headers: { ...envelope.headers }, attempt: 0 });
    return envelope;
  }

  /** The remembered seqs, oldest first (for tests and diagnostics). */
  seqs(): number[] {
    return [...this.#entries.keys()];
  }

  /** Forgets row `seq` (it was deleted). */
  forget(seq: number): void {
    const entry = this.#entries.get(seq);
    if (entry === undefined) return;
    this.#entries.delete(seq);
    this.#chars -= entry.text.length;
  }

  #set(seq: number, text: string, envelope: Envelope): void {
    this.forget(seq);
    if (text.length > MAX_ENTRY_CHARS) return;
    this.#entries.set(seq, { text, envelope });
    this.#chars += text.length;
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#capacity && this.#chars <= this.#maxChars) break;
      this.forget(oldest);
    }
  }
}
