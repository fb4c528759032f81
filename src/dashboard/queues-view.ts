import { el, replaceChildren } from './dom.js';
import { clip, formatAgo, formatDuration } from './text-format.js';
import type { DeadLetter, Lease, MailboxCounts } from '../gateways/http/api-schemas.js';

/** What the dead-letter list's buttons do. */
export interface DeadLetterActions {
  retry(messageId: string): void;
  /** Asks for confirmation itself; the list only reports the click. */
  discard(messageId: string): void;
  /** Opens the message's envelope and history. */
  open(messageId: string): void;
}

function depthBar(box: MailboxCounts, max: number): HTMLElement {
  const bar = el('div', { class: 'depth' });
  for (const [part, value] of [
    ['ready', box.ready],
    ['delayed', box.delayed],
    ['leased', box.leased],
  ] as const) {
    if (value === 0) continue;
    const seg = el('span', { class: `seg seg-${part}`, title: `${value} ${part}` });
    seg.style.setProperty('--w', `${(value / max) * 100}%`);
    bar.appendChild(seg);
  }
  return bar;
}

/** Renders the mailbox table (depth by state) and the messages in flight. */
export function renderQueues(
  container: HTMLElement,
  boxes: readonly MailboxCounts[],
  leases: readonly Lease[],
  nowMs: number,
): void {
  if (boxes.length === 0) {
    replaceChildren(container, el('p', { class: 'empty-line' }, 'All mailboxes are empty.'));
    return;
  }
  const max = Math.max(1, ...boxes.map((b) => b.total));
  const table = el(
    'table',
    { class: 'queues' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', {}, 'mailbox'),
        el('th', { title: 'ready to claim' }, 'ready'),
        el('th', { title: 'waiting for a retry delay' }, 'later'),
        el('th', { title: 'leased, being worked on' }, 'busy'),
        el('th', { title: 'dead letters' }, 'dead'),
        el('th', {}, el('span', { class: 'sr-only' }, 'depth')),
      ),
    ),
    el(
      'tbody',
      {},
      ...boxes.map((b) =>
        el(
          'tr',
          { data: { mailbox: b.mailbox, key: `box:${b.mailbox}` } },
          el('td', { class: 'mono', title: b.mailbox }, clip(b.mailbox, 24)),
          el('td', { class: 'num' }, String(b.ready)),
          el('td', { class: 'num' }, String(b.delayed)),
          el('td', { class: 'num' }, String(b.leased)),
          el('td', { class: b.deadLetters > 0 ? 'num bad' : 'num' }, String(b.deadLetters)),
          el('td', { class: 'bar-cell' }, depthBar(b, max)),
        ),
      ),
    ),
  );
  const inFlight =
    leases.length === 0
      ? null
      : el(
          'ul',
          { class: 'leases', aria: { label: 'messages in flight' } },
          ...leases
            .slice(0, 8)
            .map((l) =>
              el(
                'li',
                {},
                el('span', { class: 'mono' }, l.mailbox),
                el('span', {}, l.type),
                el('span', { class: 'muted' }, `attempt ${l.attempt}`),
                el(
                  'span',
                  { class: l.leaseUntil < nowMs ? 'bad' : 'muted' },
                  l.leaseUntil < nowMs ? 'lease expired' : `lease ${formatDuration(l.leaseUntil - nowMs)}`,
                ),
              ),
            ),
        );
  replaceChildren(container, table, inFlight);
}

/** Renders the dead letters, newest first, each opening its message, with Retry and Discard buttons. */
export function renderDeadLetters(
  container: HTMLElement,
  letters: readonly DeadLetter[],
  busy: ReadonlySet<string>,
  actions: DeadLetterActions,
  nowMs: number,
): void {
  if (letters.length === 0) {
    replaceChildren(
      container,
      el('p', { class: 'empty-line ok' }, 'No dead letters. Every message found its way.'),
    );
    return;
  }
  const sorted = [...letters].sort((a, b) => b.deadAt - a.deadAt);
  replaceChildren(
    container,
    el(
      'ul',
      { class: 'dead-list' },
      ...sorted.map((d) => {
        const isRetrying = busy.has(`dead:${d.envelope.id}`);
        const isDiscarding = busy.has(`discard:${d.envelope.id}`);
        const isBusy = isRetrying || isDiscarding;
        return el(
          'li',
          { class: 'dead', data: { message: d.envelope.id, key: `dead:${d.mailbox}/${d.envelope.id}` } },
          el(
            'div',
            { class: 'dead-top' },
            el(
              'button',
              {
                class: 'link-btn mono dead-open',
                type: 'button',
                onClick: () => actions.open(d.envelope.id),
                aria: { label: `${d.envelope.from} → ${d.mailbox}: open dead letter ${d.envelope.id}` },
              },
              `${d.envelope.from} → ${d.mailbox}`,
            ),
            el('span', { class: 'type-tag' }, d.envelope.type),
            el(
              'button',
              {
                class: 'btn btn-small',
                type: 'button',
                disabled: isBusy,
                onClick: () => actions.retry(d.envelope.id),
                aria: { label: `retry ${d.envelope.id}` },
              },
              isRetrying ? 'Retrying…' : 'Retry',
            ),
            el(
              'button',
              {
                class: 'btn btn-small btn-danger',
                type: 'button',
                disabled: isBusy,
                onClick: () => actions.discard(d.envelope.id),
                aria: { label: `discard ${d.envelope.id}` },
              },
              isDiscarding ? 'Discarding…' : 'Discard',
            ),
          ),
          el('div', { class: 'dead-reason' }, clip(d.reason, 200)),
          el(
            'div',
            { class: 'dead-meta muted' },
            `${formatAgo(d.deadAt, nowMs)} · ${d.envelope.attempt} ${d.envelope.attempt === 1 ? 'attempt' : 'attempts'} · `,
            el('span', { class: 'mono' }, clip(d.envelope.id, 28)),
          ),
        );
      }),
    ),
  );
}
