import { ApiError, type ApiClient } from './api-client.js';
import { el, replaceChildren } from './dom.js';
import type { DrawerPanel } from './drawer.js';
import { copiesTable, envelopeFacts, historyList, messageBody, retryMarkers } from './message-detail-view.js';
import { clip } from './text-format.js';
import { messageDetailReply, type BusEvent, type MessageDetailReply } from '../gateways/http/api-schemas.js';

/** A burst of events about the message (claim, ack) costs one refetch. */
const REFETCH_DELAY_MS = 250;

/** What the message panel needs from the page. */
export interface MessagePanelDeps {
  readonly api: ApiClient;
  readonly onError: (err: unknown) => void;
  /** The panel's data arrived (the drawer reads its title again). */
  readonly onLoaded: () => void;
}

/**
 * One message: its envelope (headers, body shown for its kind), its copies and its whole history.
 * Refetched when a live event concerns it, so the history grows while the drawer is open.
 */
export class MessagePanel implements DrawerPanel {
  readonly view = 'message';
  readonly element: HTMLElement;
  readonly #deps: MessagePanelDeps;
  readonly #id: string;
  #reply: MessageDetailReply | undefined;
  /** The reply last drawn: ticks redraw nothing (an opened <details> stays open). */
  #drawn: MessageDetailReply | undefined;
  #problem: string | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #isDisposed = false;

  constructor(messageId: string, deps: MessagePanelDeps) {
    this.#id = messageId;
    this.#deps = deps;
    this.element = el(
      'div',
      { class: 'drawer-panel', data: { testid: 'message-detail', message: messageId } },
      el('p', { class: 'empty-line', role: 'status' }, 'Loading the message…'),
    );
    this.#fetch();
  }

  get title(): string {
    const env = this.#reply?.envelope;
    return env === undefined ? `Message ${clip(this.#id, 16)}` : `${env.type} from ${env.from} to ${env.to}`;
  }

  update(): void {
    const reply = this.#reply;
    if (reply === undefined) {
      if (this.#problem !== undefined)
        replaceChildren(this.element, el('p', { class: 'empty-line', role: 'status' }, this.#problem));
      return;
    }
    if (reply === this.#drawn) return;
    this.#drawn = reply;
    const marks = reply.copies.flatMap((c) => retryMarkers(c));
    replaceChildren(
      this.element,
      marks.length === 0 ? null : el('p', { class: 'marks-line' }, ...marks),
      el('h3', {}, 'Envelope'),
      reply.envelope === undefined
        ? el('p', { class: 'empty-line' }, 'Neither a mailbox nor the event log still has this envelope.')
        : envelopeFacts(reply.envelope, reply.isStored),
      reply.envelope === undefined ? null : el('h3', {}, 'Body'),
      reply.envelope === undefined ? null : messageBody(reply.envelope),
      reply.copies.length === 0 ? null : el('h3', {}, reply.copies.length === 1 ? 'Delivery' : 'Copies'),
      reply.copies.length === 0 ? null : copiesTable(reply.copies),
      el('h3', {}, 'History'),
      historyList(reply.history),
    );
  }

  onEvent(event: BusEvent): void {
    if (event.messageId !== this.#id || this.#timer !== undefined) return;
    if (!event.type.startsWith('message.') && event.type !== 'escalation') return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#fetch();
    }, REFETCH_DELAY_MS);
  }

  dispose(): void {
    this.#isDisposed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #fetch(): void {
    this.#deps.api
      .get(`/api/messages/${encodeURIComponent(this.#id)}`, messageDetailReply)
      .then((reply) => {
        if (this.#isDisposed) return;
        this.#reply = reply;
        this.update();
        this.#deps.onLoaded();
      })
      .catch((err: unknown) => {
        if (this.#isDisposed) return;
        const isGone = err instanceof ApiError && err.code === 'NOT_FOUND';
        this.#problem = isGone ? 'The hub no longer knows this message.' : 'Could not load the message.';
        if (!isGone) this.#deps.onError(err);
        this.update();
      });
  }
}
