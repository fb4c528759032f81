import { el, replaceChildren } from './dom.js';
import type { LogFilter, MessageLog } from './message-log.js';
import { clip, formatClock, hueOf } from './text-format.js';
import type { MessageRow } from '../gateways/http/api-schemas.js';

const ROWS_SHOWN = 200;

/** An agent name in its own colour (the same hue as its card). */
function who(name: string): HTMLElement {
  const node = el('b', { class: 'who' }, name);
  node.style.setProperty('--hue', String(hueOf(name)));
  return node;
}

function row(r: MessageRow): HTMLElement {
  return el(
    'div',
    {
      class: `log-row status-${r.status}`,
      data: { message: r.messageId, cursor: String(r.cursor), key: `${r.mailbox}/${r.messageId}` },
    },
    el('time', { class: 'log-time', title: new Date(r.at).toLocaleString() }, formatClock(r.at)),
    el(
      'span',
      { class: 'log-route' },
      who(r.from),
      el('span', { class: 'arrow', aria: { hidden: 'true' } }, ' → '),
      who(r.mailbox),
    ),
    el('span', { class: 'type-tag', title: r.type }, r.type),
    el(
      'span',
      { class: 'log-state' },
      el(
        'span',
        { class: `status st-${r.status}` },
        r.status === 'claimed' && r.attempt > 1 ? `claimed ×${r.attempt}` : r.status,
      ),
      r.priority === 'normal' ? null : el('span', { class: `prio prio-tag-${r.priority}` }, r.priority),
    ),
    el(
      'span',
      { class: 'log-body', title: r.bodyPreview ?? '' },
      r.thread === undefined ? null : el('span', { class: 'thread' }, `#${clip(r.thread, 24)}`),
      r.bodyPreview === undefined ? null : clip(r.bodyPreview.replace(/\s+/g, ' '), 160),
    ),
  );
}

/** Renders the filtered log, newest first (at most 200 rows). */
export function renderMessageLog(container: HTMLElement, log: MessageLog, filter: LogFilter): void {
  const rows = log.list(filter);
  if (rows.length === 0) {
    const isFiltered = filter.agent !== '' || filter.type !== '' || filter.thread !== '';
    // The filter searches only the rows this page holds (the newest, up to the log's capacity).
    const loaded = log.size === 1 ? 'the last message' : `the last ${log.size} messages`;
    const text =
      isFiltered && log.size > 0
        ? `No match among ${loaded} loaded. Older ones are not searched.`
        : 'No messages yet. They stream in here live.';
    replaceChildren(container, el('p', { class: 'empty-line' }, text));
    return;
  }
  replaceChildren(container, ...rows.slice(0, ROWS_SHOWN).map(row));
}
