import { el, replaceChildren } from './dom.js';
import { retryMarkers } from './message-detail-view.js';
import type { LogFilter, MessageLog } from './message-log.js';
import { clip, formatClock, hueOf } from './text-format.js';
import { anchoredScrollTop, virtualWindow } from './virtual-window.js';
import type { MessageRow } from '../gateways/http/api-schemas.js';

/** Rows built above and below the visible ones. */
const OVERSCAN = 8;
/** The row height when the style sheet does not set `--log-row-h` (it does, per layout). */
const DEFAULT_ROW_PX = 33;
/** Built rows kept for reuse while scrolling (a row object is replaced whenever its message changes). */
const BUILT_ROWS_KEPT = 400;

/** An agent name in its own colour (the same hue as its card). */
function who(name: string): HTMLElement {
  const node = el('b', { class: 'who' }, name);
  node.style.setProperty('--hue', String(hueOf(name)));
  return node;
}

function row(r: MessageRow): HTMLElement {
  const marks = retryMarkers(r);
  const classes = [
    'log-row',
    `status-${r.status}`,
    (r.retries ?? 0) > 0 ? 'was-retried' : '',
    r.wasDead === true ? 'was-dead' : '',
  ].filter((c) => c !== '');
  const preview = r.bodyPreview === undefined ? undefined : r.bodyPreview.replace(/\s+/g, ' ').trim();
  return el(
    'button',
    {
      class: classes.join(' '),
      type: 'button',
      data: { message: r.messageId, cursor: String(r.cursor), key: `${r.mailbox}/${r.messageId}` },
    },
    el('time', { class: 'log-time', title: new Date(r.at).toLocaleString() }, formatClock(r.at)),
    el(
      'span',
      { class: 'log-route' },
      who(r.from),
      el('span', { class: 'arrow', aria: { hidden: 'true' } }, ' → '),
      el('span', { class: 'sr-only' }, ' to '),
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
      ...marks,
    ),
    el(
      'span',
      { class: 'log-body', title: r.bodyPreview ?? '' },
      r.thread === undefined ? null : el('span', { class: 'thread' }, `#${clip(r.thread, 24)}`),
      preview === undefined || preview === ''
        ? el('span', { class: 'no-preview' }, preview === '' ? '(empty body)' : '(no preview)')
        : clip(preview, 160),
    ),
  );
}

/** Finds the index of the row with `cursor` in rows sorted newest (highest cursor) first. */
function indexOfCursor(rows: readonly MessageRow[], cursor: number): number {
  let lo = 0;
  let hi = rows.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const at = rows[mid]?.cursor ?? 0;
    if (at === cursor) return mid;
    if (at > cursor) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/**
 * The message log as a virtual list: the scroll box holds a spacer as tall as every row together and
 * only the rows in view (plus {@link OVERSCAN} each side) are built, so ten thousand messages scroll
 * like fifty. Rows have one fixed height (`--log-row-h`, set per layout in log.css). When new messages
 * arrive above a reader who scrolled down, the scroll position moves with them, so what they read
 * stays put. Each row is a button that opens the message.
 */
export class MessageLogView {
  readonly #box: HTMLElement;
  readonly #spacer = el('div', { class: 'log-spacer' });
  readonly #window = el('div', { class: 'log-window' });
  readonly #empty = el('p', { class: 'empty-line' });
  #rows: readonly MessageRow[] = [];
  readonly #built = new Map<MessageRow, HTMLElement>();
  /** The newest cursor painted so far: rows above it are new and fade in once. */
  #newest = -1;
  /** The first row in view at the last paint, to keep it in view when rows arrive above. */
  #anchor: { readonly cursor: number; readonly index: number } | undefined;
  #frame = 0;

  constructor(box: HTMLElement, onOpen: (messageId: string) => void) {
    this.#box = box;
    this.#spacer.appendChild(this.#window);
    box.replaceChildren(this.#empty, this.#spacer);
    box.addEventListener('scroll', () => this.#schedule(), { passive: true });
    new ResizeObserver(() => this.#schedule()).observe(box);
    this.#window.addEventListener('click', (event) => {
      const target = event.target instanceof Element ? event.target.closest<HTMLElement>('.log-row') : null;
      const id = target?.dataset.message;
      if (id !== undefined) onOpen(id);
    });
  }

  /** Shows the rows of `log` that match `filter`, newest first. */
  render(log: MessageLog, filter: LogFilter): void {
    const rows = log.list(filter);
    const rowPx = this.#rowPx();
    const anchor = this.#anchor;
    if (anchor !== undefined && this.#box.scrollTop > 0 && rows !== this.#rows) {
      const index = indexOfCursor(rows, anchor.cursor);
      if (index > anchor.index)
        this.#box.scrollTop = anchoredScrollTop(this.#box.scrollTop, index - anchor.index, rowPx);
    }
    this.#rows = rows;
    if (rows.length === 0) {
      const isFiltered = filter.agent !== '' || filter.type !== '' || filter.thread !== '';
      // The filter searches only the rows this page holds (the newest, up to the log's capacity).
      const loaded = log.size === 1 ? 'the last message' : `the last ${log.size} messages`;
      this.#empty.textContent =
        isFiltered && log.size > 0
          ? `No match among ${loaded} loaded. Older ones are not searched.`
          : 'No messages yet. They stream in here live.';
    }
    this.#empty.hidden = rows.length > 0;
    this.#spacer.hidden = rows.length === 0;
    this.#paint();
  }

  #schedule(): void {
    if (this.#frame !== 0) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.#paint();
    });
  }

  #build(r: MessageRow): HTMLElement {
    const known = this.#built.get(r);
    if (known !== undefined) return known;
    if (this.#built.size >= BUILT_ROWS_KEPT) this.#built.clear();
    const node = row(r);
    if (this.#newest >= 0 && r.cursor > this.#newest) {
      node.classList.add('is-new');
      node.addEventListener('animationend', () => node.classList.remove('is-new'), { once: true });
    }
    this.#built.set(r, node);
    return node;
  }

  #rowPx(): number {
    const value = parseFloat(getComputedStyle(this.#box).getPropertyValue('--log-row-h'));
    return Number.isFinite(value) && value > 0 ? value : DEFAULT_ROW_PX;
  }

  #paint(): void {
    const rows = this.#rows;
    const rowHeightPx = this.#rowPx();
    const win = virtualWindow({
      count: rows.length,
      rowHeightPx,
      scrollTopPx: this.#box.scrollTop,
      viewportPx: this.#box.clientHeight,
      overscan: OVERSCAN,
    });
    this.#spacer.style.height = `${win.totalPx}px`;
    this.#window.style.transform = `translateY(${win.offsetPx}px)`;
    replaceChildren(this.#window, ...rows.slice(win.start, win.end).map((r) => this.#build(r)));
    this.#newest = Math.max(this.#newest, rows[0]?.cursor ?? -1);
    const firstInView = Math.min(rows.length - 1, Math.floor(this.#box.scrollTop / rowHeightPx));
    const first = rows[firstInView];
    this.#anchor = first === undefined ? undefined : { cursor: first.cursor, index: firstInView };
  }
}
