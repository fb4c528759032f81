import type { Clock } from '../../core/clock.js';
import type { BusEvent, StoredEvent } from '../../core/events.js';
import { ChangeSignal } from '../change-signal.js';
import { followLog } from '../follow-log.js';
import { BoundedLog } from './bounded-log.js';

const FOLLOW_BATCH = 100;

/**
 * The event log of the memory store: cursors start at 1 and strictly increase; the newest `retention`
 * events are kept. Events are copied in and out so callers never share objects with the log.
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

  append(event: BusEvent): StoredEvent {
    const stored: StoredEvent = { ...structuredClone(event), cursor: ++this.#cursor, at: this.#clock.now() };
    this.#log.append(stored);
    this.#changes.notify();
    return structuredClone(stored);
  }

  read(after: number, limit: number): StoredEvent[] {
    return this.#log.readAfter(after, { limit }).items.map((e) => structuredClone(e));
  }

  follow(options: {
    after: number;
    signal: AbortSignal;
    isClosed: () => boolean;
  }): AsyncIterable<StoredEvent> {
    return followLog({
      ...options,
      changes: this.#changes,
      read: (after) => {
        const batch = this.#log.readAfter(after, { limit: FOLLOW_BATCH });
        return { items: batch.items.map((e) => structuredClone(e)), cursor: batch.cursor };
      },
    });
  }

  lastCursor(): number {
    return this.#log.last()?.cursor ?? 0;
  }

  /** Wakes followers so they can notice the store closed. */
  wake(): void {
    this.#changes.notify();
  }
}
