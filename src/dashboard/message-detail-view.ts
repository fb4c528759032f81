import { el } from './dom.js';
import { classifyBody, type BodyView } from './message-body.js';
import { formatClock, formatDuration } from './text-format.js';
import type {
  HistoryStepView,
  MessageDetailReply,
  MessageRow,
  SentEnvelope,
} from '../gateways/http/api-schemas.js';

/** A retry delay: "78 ms" below a second, else as a duration. */
function delayText(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : formatDuration(ms);
}

/** One history step as an icon and a sentence. */
const STEP_TEXT: Readonly<
  Record<HistoryStepView['kind'], (s: HistoryStepView) => readonly [string, string]>
> = {
  sent: (s) => ['✉', `Sent by ${s.from ?? '?'} to ${s.mailbox}`],
  claimed: (s) => [
    '⟳',
    `Claimed by ${s.holder ?? s.mailbox}${s.attempt === undefined ? '' : ` (attempt ${s.attempt})`}${
      s.leaseUntil === undefined ? '' : `, lease until ${formatClock(s.leaseUntil)}`
    }`,
  ],
  lease_extended: (s) => [
    '⟳',
    `Lease extended${s.leaseUntil === undefined ? '' : ` until ${formatClock(s.leaseUntil)}`}`,
  ],
  lease_expired: (s) => [
    '⚠\uFE0E',
    `Lease ran out${s.attempt === undefined ? '' : ` (attempt ${s.attempt})`}; back in ${s.mailbox}`,
  ],
  nacked: (s) => [
    '↩',
    `Nacked${s.delayMs === undefined || s.delayMs === 0 ? '' : `; retried in ${delayText(s.delayMs)}`}`,
  ],
  dead_lettered: (s) => ['☠', `Dead-lettered${s.reason === undefined ? '' : `: ${s.reason}`}`],
  escalated: (s) => ['⚑', `Escalated${s.reason === undefined ? '' : `: ${s.reason}`}`],
  requeued: () => ['↻', 'Requeued from the dead letters'],
  acked: () => ['✓', 'Acked: done'],
  discarded: () => ['⊗', 'Discarded for good'],
};

/** The message's whole history, oldest first, each step with its time. */
export function historyList(steps: readonly HistoryStepView[]): HTMLElement {
  if (steps.length === 0) return el('p', { class: 'empty-line' }, 'No history is left in the event log.');
  return el(
    'ol',
    { class: 'msg-history', id: 'message-history', aria: { label: 'history, oldest first' } },
    ...steps.map((step) => {
      const [icon, text] = STEP_TEXT[step.kind](step);
      return el(
        'li',
        { class: `hstep hs-${step.kind}`, data: { kind: step.kind } },
        el('time', { class: 'hstep-time', title: new Date(step.at).toLocaleString() }, formatClock(step.at)),
        el('span', { class: 'hstep-icon', aria: { hidden: 'true' } }, icon),
        el('span', { class: 'hstep-text' }, text),
        el('span', { class: 'hstep-box muted' }, step.mailbox),
      );
    }),
  );
}

/** A list of name/value pairs. */
function facts(pairs: readonly (readonly [string, string | undefined])[]): HTMLElement {
  return el(
    'dl',
    { class: 'kv' },
    ...pairs.flatMap(([k, v]) => (v === undefined ? [] : [el('dt', {}, k), el('dd', {}, v)])),
  );
}

/** The envelope's fields and headers. */
export function envelopeFacts(envelope: SentEnvelope, isStored: boolean): HTMLElement {
  const headers = Object.entries(envelope.headers);
  return el(
    'div',
    { class: 'envelope' },
    facts([
      ['id', envelope.id],
      ['from', envelope.from],
      ['to', envelope.to],
      ['type', envelope.type],
      ['priority', envelope.priority],
      ['thread', envelope.thread],
      [
        'created',
        envelope.createdAt === undefined ? undefined : new Date(envelope.createdAt).toLocaleString(),
      ],
      [
        'stored',
        isStored ? 'yes: a mailbox still holds it' : 'no: done and deleted; the event log kept this copy',
      ],
    ]),
    headers.length === 0
      ? null
      : el('details', { class: 'tx-fold' }, el('summary', {}, `Headers (${headers.length})`), facts(headers)),
  );
}

function bodyNode(view: BodyView): HTMLElement {
  switch (view.kind) {
    case 'empty':
      return el('p', { class: 'empty-line' }, '(empty body)');
    case 'result':
      return el(
        'article',
        { class: 'result-doc', data: { bodyKind: 'result' } },
        el(
          'p',
          { class: 'result-head' },
          el('span', { class: `result-status rs-${view.status}` }, view.status.replace(/_/g, ' ')),
          view.from === '' ? null : el('span', {}, ` from ${view.from}`),
          view.id === '' ? null : el('span', { class: 'muted' }, ` · task ${view.id}`),
        ),
        el('h4', {}, 'Summary'),
        el('div', { class: 'tx-text' }, view.summary === '' ? '(none)' : view.summary),
        el('h4', {}, 'Output'),
        el('pre', { class: 'tx-pre' }, view.output === '' ? '(none)' : view.output),
      );
    case 'error':
      return el(
        'article',
        { class: 'result-doc is-error', data: { bodyKind: 'error' } },
        el(
          'p',
          { class: 'result-head' },
          el('span', { class: 'result-status rs-error' }, 'error'),
          ` from ${view.from}`,
        ),
        el('div', { class: 'tx-text' }, view.message),
      );
    case 'json':
      return el('pre', { class: 'tx-pre body-json', data: { bodyKind: 'json' } }, view.text);
    case 'yaml':
      return el('pre', { class: 'tx-pre body-yaml', data: { bodyKind: 'yaml' } }, view.text);
    case 'text':
      return el('div', { class: 'tx-text body-text', data: { bodyKind: 'text' } }, view.text);
  }
}

/** The body, shown for its kind, with a note when only its head was kept. */
export function messageBody(envelope: SentEnvelope): HTMLElement {
  const view = classifyBody(envelope.body, { headers: envelope.headers });
  return el(
    'div',
    { class: 'msg-body', id: 'message-body' },
    envelope.isBodyCut ? el('p', { class: 'note' }, 'Only the first 4 KiB of this body were kept.') : null,
    bodyNode(view),
  );
}

/** Markers for a message that went back to its mailbox or to the dead letters: text, not colour alone. */
export function retryMarkers(row: Pick<MessageRow, 'retries' | 'wasDead' | 'status'>): HTMLElement[] {
  const marks: HTMLElement[] = [];
  if ((row.retries ?? 0) > 0)
    marks.push(
      el(
        'span',
        { class: 'mark mark-retried', title: `went back to its mailbox ${row.retries} times` },
        `↻ ${row.retries}`,
      ),
    );
  // A message still dead says so in its status; the mark is for one that was dead and moved on.
  if (row.wasDead === true && row.status !== 'dead')
    marks.push(
      el('span', { class: 'mark mark-dead', title: 'was dead-lettered, then requeued' }, '☠ was dead'),
    );
  return marks;
}

/** The copies (one per mailbox) with their state. */
export function copiesTable(copies: MessageDetailReply['copies']): HTMLElement {
  return el(
    'table',
    { class: 'copies' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', {}, 'mailbox'),
        el('th', {}, 'status'),
        el('th', {}, 'attempt'),
        el('th', {}, 'marks'),
      ),
    ),
    el(
      'tbody',
      {},
      ...copies.map((c) =>
        el(
          'tr',
          {},
          el('td', { class: 'mono' }, c.mailbox),
          el('td', {}, el('span', { class: `status st-${c.status}` }, c.status)),
          el('td', { class: 'num' }, String(c.attempt)),
          el('td', {}, ...retryMarkers(c)),
        ),
      ),
    ),
  );
}
