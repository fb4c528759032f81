import * as z from 'zod';
import { busEvent, type BusEvent } from './wire-schemas.js';

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
const RETRY_MAX_MS = 15_000;

/**
 * The live bus event stream. EventSource reconnects by itself after a network error and sends
 * `Last-Event-ID`, so the gateway replays what was missed. When the hub answers with an error status
 * (a stopping hub says 503), EventSource gives up for good; the feed then opens a new one after the
 * last cursor it saw, with a growing delay. Events that fail the schema are skipped.
 */
export class EventFeed {
  readonly #handlers: EventFeedHandlers;
  #source: EventSource | undefined;
  #cursor: number;
  #retryMs = 1_000;

  constructor(cursor: number, handlers: EventFeedHandlers) {
    this.#cursor = cursor;
    this.#handlers = handlers;
    this.#open();
  }

  #open(): void {
    const handlers = this.#handlers;
    handlers.onStatus(this.#source === undefined ? 'connecting' : 'reconnecting');
    const source = new EventSource(`/api/events?after=${this.#cursor}`, { withCredentials: true });
    this.#source = source;
    source.addEventListener('ready', (message: MessageEvent<unknown>) => {
      const ready = readyData.safeParse(parseJson(message.data));
      if (ready.success) this.#cursor = ready.data.cursor;
      this.#retryMs = 1_000;
      handlers.onStatus('live');
      handlers.onOpen(ready.success && ready.data.isReset);
    });
    source.addEventListener('error', () => {
      handlers.onStatus('reconnecting');
      if (source.readyState !== EventSource.CLOSED) return;
      setTimeout(() => this.#open(), this.#retryMs);
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
