import type { Bus } from '../../bus/bus.types.js';
import type { StoredEvent } from '../../core/events.js';

/** The one bus verb the tail reader uses. */
export type EventReader = Pick<Bus, 'readEvents'>;

const GALLOP_START = 1024;
const WINDOW = 500;

async function firstAfter(reader: EventReader, after: number): Promise<number | undefined> {
  const [event] = await reader.readEvents({ after, limit: 1 });
  return event?.cursor;
}

/**
 * The cursor of the newest stored event, 0 for an empty log. The bus has no verb for this, so it gallops
 * forward and then bisects with one-event reads: about 2·log2(n) indexed reads. Cursors may have gaps
 * (NATS) or a trimmed head (retention); only "strictly increasing" is relied on.
 */
export async function lastEventCursor(reader: EventReader): Promise<number> {
  let lo = await firstAfter(reader, 0);
  if (lo === undefined) return 0;
  // Invariant: an event has cursor `lo`; no event has a cursor above `hi`.
  let step = GALLOP_START;
  let hi = lo + step;
  for (let next = await firstAfter(reader, hi); next !== undefined; next = await firstAfter(reader, hi)) {
    lo = next;
    step *= 2;
    hi = lo + step;
  }
  while (hi > lo) {
    const mid = Math.floor((lo + hi) / 2);
    const next = await firstAfter(reader, mid);
    if (next === undefined) hi = mid;
    else lo = next;
  }
  return lo;
}

/** Options of {@link readRecentEvents}. */
export interface RecentEventsOptions {
  /** Newest cursor to consider (from {@link lastEventCursor}). */
  readonly tail: number;
  /** Which events to keep. */
  readonly match: (event: StoredEvent) => boolean;
  /** Most events to return. */
  readonly limit: number;
  /** How far back to look, in cursor positions, before giving up. */
  readonly scanLimit: number;
}

/**
 * The newest `limit` matching events at or before `tail`, oldest first, found by reading the log
 * backwards in windows. Looks at most `scanLimit` cursor positions back, so a quiet log stays cheap.
 */
export async function readRecentEvents(
  reader: EventReader,
  options: RecentEventsOptions,
): Promise<StoredEvent[]> {
  const found: StoredEvent[][] = [];
  let count = 0;
  const floor = Math.max(0, options.tail - options.scanLimit);
  for (let end = options.tail; end > floor && count < options.limit;) {
    const start = Math.max(floor, end - WINDOW);
    const events = await reader.readEvents({ after: start, limit: end - start });
    const matching = events.filter((e) => e.cursor <= end && options.match(e));
    found.unshift(matching);
    count += matching.length;
    end = start;
  }
  return found.flat().slice(-options.limit);
}
