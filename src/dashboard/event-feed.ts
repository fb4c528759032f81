import * as z from 'zod';
import { busEvent, type BusEvent } from '../gateways/http/api-schemas.js';

/** Connection state shown in the header. */
export type FeedStatus = 'connecting' | 'live' | 'reconnecting';

/** Callbacks of {@link EventFeed}. */
export interface EventFeedHandlers {
  readonly onEvent: (event: BusEvent) => void;
  readonly onStatus: (status: FeedStatus) => void;
  /**
   * Each (re)connection: the page refreshes its snapshots, since anything may have changed meanwhile.
   * `isReset` says the hub's log is not the one the page followed (e.g. a restarted memory store).
   */
  readonly onOpen: (isReset: boolean) => void;
}

const readyData = z.object({ cursor: z.number(), isReset: z.boolean() });
const RETRY_START_MS = 1_000;
/** The longest wait between two connection attempts while the hub stays away. */
export const RETRY_MAX_MS = 15_000;

/**
 * The live bus event stream. On any error (hub down, network gone, an error status such as a stopping
 * hub's 503) the feed closes the EventSource itself, rather than letting the browser retry at the
 * server's `retry: 1000` for as long as the hub is away, and opens a new one after the last cursor it
 * saw, with a delay that doubles from 1 s up to {@link RETRY_MAX_MS} and starts over after each
 * successful open. Events that fail the schema are skipped.
 */
export class EventFeed {
  readonly #handlers: EventFeedHandlers;
  #source: EventSource | undefined;
  #cursor: number;
  #retryMs = RETRY_START_MS;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  #isClosed = false;

  constructor(cursor: number, handlers: EventFeedHandlers) {
    this.#cursor = cursor;
    this.#handlers = handlers;
    this.#open();
  }

  /** Stops the feed for good: closes the stream and cancels a pending reconnect. Idempotent. */
  close(): void {
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    this.#isClosed = true;
    this.#source?.close();
  }

  #open(): void {
    if (this.#isClosed) return;
    const handlers = this.#handlers;
    handlers.onStatus(this.#source === undefined ? 'connecting' : 'reconnecting');
    const source = new EventSource(`/api/events?after=${this.#cursor}`, { withCredentials: true });
    this.#source = source;
    source.addEventListener('ready', (message: MessageEvent<unknown>) => {
      const ready = readyData.safeParse(parseJson(message.data));
      if (ready.success) this.#cursor = ready.data.cursor;
      this.#retryMs = RETRY_START_MS;
      handlers.onStatus('live');
      handlers.onOpen(ready.success && ready.data.isReset);
    });
    source.addEventListener('error', () => {
      // Close at once: left open, the browser would retry every second while the hub is down.
      source.close();
      if (this.#isClosed || this.#source !== source || this.#retryTimer !== undefined) return;
      handlers.onStatus('reconnecting');
      this.#retryTimer = setTimeout(() => {
        this.#retryTimer = undefined;
        this.#open();
      }, this.#retryMs);
      this.#retryMs = Math.min(this.#retryMs * 2, RETRY_MAX_MS);
    });
    source.addEventListener('message', (message: MessageEvent<unknown>) => {
      const parsed = busEvent.safeParse(parseJson(message.data));
      if (!parsed.success) return;
      this.#cursor = Math.max(this.#cursor, parsed.data.cursor);
      handlers.onEvent(parsed.data);
    });
  }
}

function parseJson(data: unknown): unknown {
  if (typeof data !== 'string') return undefined;
  try {
    return JSON.parse(data);
  } catch {
    return undefined; // the gateway only sends JSON; anything else came from a broken proxy
  }
}
