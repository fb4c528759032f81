import type { JetStreamClient, JsMsg } from '@nats-io/jetstream';
import type { Clock } from '../../core/clock.js';
import { MusubiError } from '../../core/errors.js';
import type { BusEvent, StoredEvent } from '../../core/events.js';
import { parseJournalRecord, recordEvent } from './journal-record.js';
import type { JournalNames } from './journal-names.js';
import type { JournalWriter } from './journal-writer.js';
import { followStream, readStream } from './stream-reader.js';

/** Collaborators of {@link NatsEventLog}. */
export interface NatsEventLogOptions {
  readonly js: JetStreamClient;
  readonly names: JournalNames;
  readonly writer: JournalWriter;
  readonly clock: Clock;
  /** Aborts when the store closes; running follows then end. */
  readonly closeSignal: AbortSignal;
}

/**
 * The event log of the NATS store is the journal itself: every message record is also the event of
 * that change, and events from higher layers are records on their own subject. The cursor is the
 * stream sequence. A record that fails its schema is skipped by reads and follows (never used).
 */
export class NatsEventLog {
  readonly #o: NatsEventLogOptions;

  constructor(options: NatsEventLogOptions) {
    this.#o = options;
  }

  async append(event: BusEvent): Promise<StoredEvent> {
    const at = this.#o.clock.now();
    const cursor = await this.#o.writer.append(this.#o.names.eventSubject, { op: 'event', event, at });
    return { ...structuredClone(event), cursor, at };
  }

  async read(after: number, limit: number): Promise<StoredEvent[]> {
    const { js, names } = this.#o;
    const messages = await readStream(js, { stream: names.stream, start: { afterSeq: after } }, limit);
    return messages.flatMap((msg) => eventsOf(msg));
  }

  /** Events after `after`, then live ones, until `signal` aborts or the store closes. */
  async *follow(after: number, signal: AbortSignal): AsyncGenerator<StoredEvent, void, undefined> {
    const { js, names, closeSignal } = this.#o;
    if (closeSignal.aborted) throw new MusubiError('STORE_CLOSED', 'NATS store is closed');
    const stop = AbortSignal.any([signal, closeSignal]);
    try {
      for await (const msg of followStream(js, { stream: names.stream, start: { afterSeq: after } }, stop)) {
        yield* eventsOf(msg);
      }
    } catch (err) {
      // Closing the store closes the connection under a follow; that ends it quietly.
      if (!stop.aborted) throw err;
    }
  }

  lastCursor(): Promise<number> {
    return this.#o.writer.lastSeq();
  }
}

function eventsOf(msg: JsMsg): StoredEvent[] {
  try {
    return [recordEvent(parseJournalRecord(msg.string(), msg.seq), msg.seq)];
  } catch {
    // STORE_CORRUPT: the record is skipped, never used; the cursor moves past it.
    return [];
  }
}
