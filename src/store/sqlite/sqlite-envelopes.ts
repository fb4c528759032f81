import type { Envelope } from '../../core/envelope.js';
import { MusubiError } from '../../core/errors.js';
import { frozenCopy, type EnvelopeCache } from './envelope-cache.js';
import type { SqliteEventLog } from './sqlite-event-log.js';
import { decodeEnvelope } from './sqlite-rows.js';

/**
 * Where a message row's envelope comes from: the row's own `envelope` text when it has one, else the
 * `message.sent` event at cursor `seq`, through the {@link EnvelopeCache} either way.
 */
export class SqliteEnvelopes {
  readonly #cache: EnvelopeCache;
  readonly #events: SqliteEventLog;

  constructor(options: { readonly cache: EnvelopeCache; readonly events: SqliteEventLog }) {
    this.#cache = options.cache;
    this.#events = options.events;
  }

  /**
   * The envelope of the message row (`seq`, `text` its `envelope` column) with the live `attempt`.
   * `isCommitted` says the event it may come from is committed (a read, not a write batch): only then
   * is a decoded event remembered, since a rolled-back insert frees its cursor. Throws STORE_CORRUPT
   * for an envelope that does not decode or an event that is gone.
   */
  of(seq: number, text: string | null, attempt: number, where: string, isCommitted: boolean): Envelope {
    if (text !== null) return this.#cache.decode(seq, text, attempt, where);
    const known = this.#cache.stored(seq, attempt);
    if (known !== undefined) return known;
    const stored = this.#events.envelopeText(seq);
    if (typeof stored !== 'string') {
      throw new MusubiError('STORE_CORRUPT', `${where}: the event holding message ${seq}'s envelope is gone`);
    }
    const envelope = decodeEnvelope(stored, attempt, where);
    if (isCommitted) this.#cache.remember(seq, envelope);
    return envelope;
  }

  /**
   * After a commit: message `seq`'s envelope is `envelope` (its attempt is taken as 0), held by its
   * event when `isHeldByEvent` (then remembered as trusted). Returns it frozen, with attempt 0.
   */
  remember(seq: number, envelope: Envelope, isHeldByEvent: boolean): Envelope {
    if (isHeldByEvent) return this.#cache.remember(seq, envelope);
    return frozenCopy(envelope);
  }

  /** Message `seq` left the table. */
  forget(seq: number): void {
    this.#cache.forget(seq);
  }
}
