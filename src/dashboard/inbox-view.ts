import { el, replaceChildren } from './dom.js';
import { retryMarkers } from './message-detail-view.js';
import { formatAgo, formatClock, hueOf } from './text-format.js';
import type { InboxItem, InboxReply } from '../gateways/http/api-schemas.js';

/** What the inbox's controls do. */
export interface InboxActions {
  open(messageId: string): void;
  /** Sends `text` to the item's sender, in its thread; resolves true once the hub took it. */
  reply(item: InboxItem, text: string): Promise<boolean>;
}

/** A kind as a word and an icon. */
const KIND_ICONS: Readonly<Record<string, string>> = {
  result: '✓',
  escalation: '⚑',
  report: '≡',
  question: '?',
  reply: '↩',
  message: '✉',
};

const itemKey = (item: InboxItem): string =>
  `inbox:${item.kind}:${item.mailbox}/${item.messageId}/${item.cursor}`;

/**
 * The human inbox: what agents sent to the person at the page (results, escalations, reports,
 * questions), newest first, each opening the message and with a reply form that answers the sender in
 * the same thread. Drafts survive re-renders; a sent reply is marked on its item.
 */
export class InboxView {
  readonly #box: HTMLElement;
  readonly #actions: InboxActions;
  readonly #drafts = new Map<string, string>();
  readonly #sending = new Set<string>();
  readonly #replied = new Set<string>();
  /** Items up to this cursor were on screen; later ones are marked new. */
  #seenCursor = -1;
  #markFrom = -1;

  constructor(box: HTMLElement, actions: InboxActions) {
    this.#box = box;
    this.#actions = actions;
  }

  /** How many items arrived since the inbox was last shown (the tab's badge). */
  unread(reply: InboxReply | undefined): number {
    return (reply?.items ?? []).filter((i) => i.cursor > this.#seenCursor).length;
  }

  /** Renders the items; `isShown` marks them read (they stay marked new until the next visit). */
  render(reply: InboxReply | undefined, nowMs: number, isShown: boolean): void {
    if (reply === undefined) {
      replaceChildren(this.#box, el('p', { class: 'loading' }, 'Loading the inbox…'));
      return;
    }
    if (reply.items.length === 0) {
      replaceChildren(
        this.#box,
        el(
          'p',
          { class: 'empty-line', data: { testid: 'inbox-empty' } },
          'Nothing for you yet. Results, escalations and questions for you land here.',
        ),
      );
      return;
    }
    const items = [...reply.items].reverse();
    replaceChildren(
      this.#box,
      el(
        'ol',
        { class: 'inbox-list', id: 'inbox-list', aria: { label: 'messages for you, newest first' } },
        ...items.map((item, i) => this.#item(item, i, nowMs)),
      ),
    );
    if (isShown) {
      const newest = Math.max(...reply.items.map((i) => i.cursor));
      if (newest > this.#seenCursor) {
        this.#markFrom = this.#seenCursor;
        this.#seenCursor = newest;
      }
    }
  }

  #item(item: InboxItem, index: number, nowMs: number): HTMLElement {
    const key = itemKey(item);
    const isNew = this.#markFrom >= 0 && item.cursor > this.#markFrom;
    const inputId = `inbox-reply-${index}`;
    const from = el('b', { class: 'who' }, item.from);
    from.style.setProperty('--hue', String(hueOf(item.from)));
    const input = el('input', {
      id: inputId,
      type: 'text',
      class: 'inbox-reply-text',
      placeholder: `reply to ${item.from}…`,
      value: this.#drafts.get(key) ?? '',
      attrs: { maxlength: '64000', autocomplete: 'off' },
    });
    input.addEventListener('input', () => this.#drafts.set(key, input.value));
    const isSending = this.#sending.has(key);
    const form = el(
      'form',
      { class: 'inbox-reply', data: { testid: 'inbox-reply' }, aria: { label: `reply to ${item.from}` } },
      el(
        'label',
        { class: 'sr-only', attrs: { for: inputId } },
        `Reply to ${item.from}${item.thread === undefined ? '' : ` in thread ${item.thread}`}`,
      ),
      input,
      el(
        'button',
        { class: 'btn btn-small', type: 'submit', disabled: isSending },
        isSending ? 'Sending…' : 'Reply',
      ),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void this.#send(item, key, form);
    });
    return el(
      'li',
      {
        class: `inbox-item kind-${item.kind}${isNew ? ' is-new' : ''}`,
        data: { message: item.messageId, kind: item.kind, key },
      },
      el(
        'div',
        { class: 'inbox-meta' },
        el(
          'span',
          { class: `kind-badge kb-${item.kind}` },
          el('span', { class: 'icon', aria: { hidden: 'true' } }, KIND_ICONS[item.kind] ?? '✉'),
          item.kind,
        ),
        isNew ? el('span', { class: 'mark mark-new' }, 'new') : null,
        el('span', {}, 'from ', from),
        item.thread === undefined ? null : el('span', { class: 'thread' }, `#${item.thread}`),
        el(
          'time',
          { title: new Date(item.at).toLocaleString() },
          `${formatClock(item.at)} · ${formatAgo(item.at, nowMs)}`,
        ),
        el('span', { class: `status st-${item.status}` }, item.status),
        ...retryMarkers(item),
        // Last, so the mark #send adds to the live node matches what the next render builds.
        this.#replied.has(key) ? repliedMark() : null,
      ),
      el(
        'h3',
        { class: 'inbox-title' },
        el(
          'button',
          {
            class: 'link-btn',
            type: 'button',
            onClick: () => this.#actions.open(item.messageId),
            aria: { label: `open: ${item.title || item.type}` },
          },
          item.title === '' ? `(${item.type})` : item.title,
        ),
      ),
      form,
    );
  }

  /**
   * Sends the reply, changing the live form in place (button, then the replied mark) instead of
   * re-rendering, so focus stays in the field; the next render builds the same nodes.
   */
  async #send(item: InboxItem, key: string, form: HTMLFormElement): Promise<void> {
    const input = form.querySelector('input');
    const button = form.querySelector('button');
    const text = input?.value.trim() ?? '';
    if (input === null || button === null || text === '' || this.#sending.has(key)) return;
    this.#sending.add(key);
    button.disabled = true;
    button.textContent = 'Sending…';
    const isSent = await this.#actions.reply(item, text);
    this.#sending.delete(key);
    button.disabled = false;
    button.textContent = 'Reply';
    if (!isSent) return;
    this.#drafts.delete(key);
    input.value = '';
    if (!this.#replied.has(key)) {
      this.#replied.add(key);
      form.parentElement?.querySelector('.inbox-meta')?.append(repliedMark());
    }
  }
}

function repliedMark(): HTMLElement {
  return el('span', { class: 'mark mark-replied' }, '↩ replied');
}
