import { busEvent, type BusEvent } from './wire-schemas.js';

/** Connection state shown in the header. */
export type FeedStatus = 'connecting' | 'live' | 'reconnecting';

/** Callbacks of {@link EventFeed}. */
export interface EventFeedHandlers {
  readonly onEvent: (event: BusEvent) => void;
  readonly onStatus: (status: FeedStatus) => void;
  /** Each (re)connection: the page refreshes its snapshots, since anything may have changed meanwhile. */
  readonly onOpen: () => void;
}

/**
 * The live bus event stream. EventSource reconnects by itself and sends `Last-Event-ID`, so the gateway
 * replays what was missed; the first connection starts after `cursor` (the snapshot the page loaded).
 * Events that fail the schema are skipped.
 */
export class EventFeed {
  readonly #source: EventSource;

  constructor(cursor: number, handlers: EventFeedHandlers) {
    handlers.onStatus('connecting');
    this.#source = new EventSource(`/api/events?after=${cursor}`, { withCredentials: true });
    this.#source.addEventListener('ready', () => {
      handlers.onStatus('live');
      handlers.onOpen();
    });
    this.#source.addEventListener('error', () => handlers.onStatus('reconnecting'));
    this.#source.addEventListener('message', (message: MessageEvent<unknown>) => {
      if (typeof message.data !== 'string') return;
      let json: unknown;
      try {
        json = JSON.parse(message.data);
      } catch {
        return; // not an event; the gateway only sends JSON, so this is a broken proxy
      }
      const parsed = busEvent.safeParse(json);
      if (parsed.success) handlers.onEvent(parsed.data);
    });
  }

  /** Closes the stream. */
  close(): void {
    this.#source.close();
  }
}
