import type { Clock } from '../../core/clock.js';
import type { BusEvent, StoredEvent } from '../../core/events.js';
import { ChangeSignal } from '../change-signal.js';
import { followLog } from '../follow-log.js';
import { BoundedLog } from './bounded-log.js';
import { deepFreeze } from './deep-freeze.js';

const FOLLOW_BATCH = 100;

/**
 * The event log of the memory store: cursors start at 1 and strictly increase; the newest `retention`
 * events are kept. Stored events are deeply frozen and handed out as they are (readers get fresh arrays
 * of shared, immutable events), so callers never share a mutable object with the log and nothing is
 * copied on the way out.
 */
export class MemoryEventLog {
  readonly #clock: Clock;
  readonly #log: BoundedLog<StoredEvent>;
  readonly #changes = new ChangeSignal();
  #cursor = 0;

  constructor(options: { clock: Clock; retention: number }) {
    this.#clock = options.clock;
    this.#log = new BoundedLog({ positionOf: (e) => e.cursor, retention: options.retention });
  }

  /** Appends a caller's event: copied once (the caller keeps its object), then frozen. */
  append(event: BusEvent): StoredEvent {
    return this.#store(deepFreeze(this.#stamp(structuredClone(event))));
  }

  /**
   * Appends an event the store itself just built from plain values (message events): nothing else
   * holds it and none of its fields is an object, so freezing it suffices.
   */
  record(event: BusEvent): StoredEvent {
    return this.#store(Object.freeze(this.#stamp(event)));
  }

  read(after: number, limit: number): StoredEvent[] {
    return this.#log.readAfter(after, { limit }).items;
  }

  follow(options: {
    after: number;
    signal: AbortSignal;
    isClosed: () => boolean;
  }): AsyncIterable<StoredEvent> {
    return followLog({
      ...options,
      changes: this.#changes,
      read: (after) => this.#log.readAfter(after, { limit: FOLLOW_BATCH }),
    });
  }

  lastCursor(): number {
    return this.#log.last()?.cursor ?? 0;
  }

  /** Wakes followers so they can notice the store closed. */
  wake(): void {
    this.#changes.notify();
  }

  /**
   * A copy of `event` with the next cursor and the time. Object.assign, not `{ ...event, cursor, at }`:
   * V8 (Node 20) takes a slow path when a spread clone gains new properties, costing microseconds.
   */
  #stamp(event: BusEvent): StoredEvent {
    return Object.assign({}, event, { cursor: this.#cursor + 1, at: this.#clock.now() });
  }

  #store(stored: StoredEvent): StoredEvent {
    this.#cursor = stored.cursor;
    this.#log.append(stored);
    this.#changes.notify();
    return stored;
  }
}
