import { envelopeSchema, type Envelope } from '../../core/envelope.js';
import { decodeEnvelope } from './sqlite-rows.js';

/** Envelopes remembered at most; the oldest entry goes first. */
const DEFAULT_CAPACITY = 4_096;
/** Text (UTF-16 code units, bodies and stored JSON) remembered at most over all entries: about 16 MiB. */
const DEFAULT_MAX_CHARS = 4 * 1024 * 1024;
/** Envelopes with more text than this are always decoded: a few large bodies would crowd out everything. */
const MAX_ENTRY_CHARS = 16 * 1024;
/** The envelope's keys in the schema's order: decoding gives them in this order. */
const ENVELOPE_KEYS = Object.keys(envelopeSchema.shape) as Array<keyof Envelope>;

interface Entry {
  /** The row text it was decoded from, or undefined for an envelope whose stored JSON never changes. */
  readonly text: string | undefined;
  /** As stored (attempt 0), frozen, headers too: handed out as it is while the attempt is 0. */
  readonly envelope: Envelope;
  readonly chars: number;
}

/**
 * Decoded envelopes of messages, keyed by seq, so that claiming or peeking a message this connection
 * wrote or decoded before skips JSON.parse and schema validation. Two kinds of entry:
 * - for a message whose envelope is its `message.sent` event's JSON (which nothing ever rewrites, and
 *   whose cursor is never reused once committed): remembered after this connection committed it, or
 *   once decoded from the committed event; a hit is trusted as it is ({@link EnvelopeCache.stored});
 * - for a row that holds its envelope itself (long bodies, older rows): a hit needs the row's text to
 *   equal the text the entry was made from ({@link EnvelopeCache.decode}), so a row changed by another
 *   process or by hand simply misses and is decoded (and validated) again.
 * Hits with attempt 0 get the frozen stored envelope itself; others a copy with their attempt. Bounded
 * by entry count and by total text; envelopes over 16 Ki characters are not remembered.
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
   * Remembers the envelope of message `seq`, held by its committed `message.sent` event: written by this
   * connection (which the bus validated, the Store contract) or decoded from that event.
   */
  remember(seq: number, envelope: Envelope): Envelope {
    return this.#set(seq, undefined, envelope);
  }

  /** The envelope of message `seq` as {@link EnvelopeCache.remember} kept it, with the live `attempt`. */
  stored(seq: number, attempt: number): Envelope | undefined {
    const entry = this.#entries.get(seq);
    if (entry === undefined || entry.text !== undefined) return undefined;
    return withAttempt(entry.envelope, attempt);
  }

  /** The envelope row `seq` holds as `text`, with the live `attempt`; throws STORE_CORRUPT for a bad row. */
  decode(seq: number, text: string, attempt: number, where: string): Envelope {
    const entry = this.#entries.get(seq);
    if (entry !== undefined && entry.text === text) return withAttempt(entry.envelope, attempt);
    const envelope = decodeEnvelope(text, attempt, where);
    this.#set(seq, text, envelope);
    return envelope;
  }

  /** The remembered seqs, oldest first (for tests and diagnostics). */
  seqs(): number[] {
    return [...this.#entries.keys()];
  }

  /** Forgets message `seq` (it left the table). */
  forget(seq: number): void {
    const entry = this.#entries.get(seq);
    if (entry === undefined) return;
    this.#entries.delete(seq);
    this.#chars -= entry.chars;
  }

  /** Keeps a frozen copy (see {@link frozenCopy}) unless it is too large; returns the copy. */
  #set(seq: number, text: string | undefined, envelope: Envelope): Envelope {
    this.forget(seq);
    const copy = frozenCopy(envelope);
    const chars = (text ?? envelope.body).length;
    if (chars > MAX_ENTRY_CHARS) return copy;
    this.#entries.set(seq, { text, envelope: copy, chars });
    this.#chars += chars;
    for (const oldest of this.#entries.keys()) {
      if (this.#entries.size <= this.#capacity && this.#chars <= this.#maxChars) break;
      this.forget(oldest);
    }
    return copy;
  }
}

/**
 * A frozen copy of `envelope` shaped as decoding its JSON gives it: the schema's key order, no key for
 * an absent optional field, attempt 0, frozen headers (a frozen headers object is shared as it is).
 */
export function frozenCopy(envelope: Envelope): Envelope {
  const copy: Record<string, unknown> = {};
  for (const key of ENVELOPE_KEYS) {
    const value = envelope[key];
    if (value !== undefined) copy[key] = value;
  }
  copy['headers'] = Object.isFrozen(envelope.headers)
    ? envelope.headers
    : Object.freeze({ ...envelope.headers });
  copy['attempt'] = 0;
  return Object.freeze(copy) as unknown as Envelope;
}

/** `envelope` (frozen, attempt 0) as it is for attempt 0, else a copy with `attempt`. */
function withAttempt(envelope: Envelope, attempt: number): Envelope {
  if (attempt === 0) return envelope;
  return { ...envelope, headers: { ...envelope.headers }, attempt };
}
