import { el, replaceChildren } from './dom.js';
import { headlineCounts } from './headline-counts.js';
import type { PageState } from './page-state.js';

const FEED_LABELS = { connecting: 'connecting…', live: 'live', reconnecting: 'reconnecting…' } as const;

/** Renders the counters in the top bar (each a value and what it counts) and the live-connection badge. */
export function renderHeader(stats: HTMLElement, feed: HTMLElement, state: PageState): void {
  replaceChildren(
    stats,
    ...headlineCounts(state).map((c) =>
      el(
        'div',
        { class: `stat ${c.tone}`.trim(), title: c.title, data: { stat: c.id } },
        el('span', { class: 'stat-value' }, c.value),
        el('span', { class: 'stat-label' }, c.label),
      ),
    ),
  );
  feed.className = `feed-status feed-${state.feed}`;
  feed.dataset.status = state.feed;
  replaceChildren(feed, el('span', { class: 'dot', aria: { hidden: 'true' } }), FEED_LABELS[state.feed]);
}
