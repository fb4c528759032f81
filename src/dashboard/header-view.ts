import { el, replaceChildren } from './dom.js';
import type { PageState } from './page-state.js';
import { formatCount, formatUsd } from './text-format.js';

const FEED_LABELS = { connecting: 'connecting…', live: 'live', reconnecting: 'reconnecting…' } as const;

function stat(label: string, value: string, tone = ''): HTMLElement {
  return el(
    'div',
    { class: `stat ${tone}` },
    el('span', { class: 'stat-value' }, value),
    el('span', { class: 'stat-label' }, label),
  );
}

/** Renders the totals in the top bar and the live-connection badge. */
export function renderHeader(stats: HTMLElement, feed: HTMLElement, state: PageState): void {
  const agents = state.agents?.agents ?? [];
  const busy = agents.filter((a) => a.state === 'busy').length;
  const waiting = state.mailboxes.reduce((n, b) => n + b.ready + b.delayed, 0);
  const inFlight = state.mailboxes.reduce((n, b) => n + b.leased, 0);
  const dead = state.mailboxes.reduce((n, b) => n + b.deadLetters, 0);
  const totals = state.agents?.totals;
  const tokens = totals === undefined ? 0 : totals.inputTokens + totals.outputTokens;
  const running = state.tasks?.tasks.filter((t) => t.state === 'running').length ?? 0;
  replaceChildren(
    stats,
    stat('agents', agents.length === 0 ? '0' : `${busy}/${agents.length}`, busy > 0 ? 'tone-busy' : ''),
    stat('queued', formatCount(waiting)),
    stat('in flight', formatCount(inFlight)),
    stat('dead', formatCount(dead), dead > 0 ? 'tone-bad' : ''),
    stat('tasks', String(running)),
    stat('tokens', formatCount(tokens)),
    stat('cost', formatUsd(totals?.costUsd ?? 0)),
  );
  feed.className = `feed-status feed-${state.feed}`;
  feed.dataset.status = state.feed;
  replaceChildren(feed, el('span', { class: 'dot', aria: { hidden: 'true' } }), FEED_LABELS[state.feed]);
}
