import { el } from './dom.js';
import { formatClock } from './text-format.js';

/**
 * Marks the page stale while its live feed is down: `is-stale` on the body (stale.css dims the panels,
 * whose data is what was known then) and "since hh:mm:ss" on the feed pill. Clears both on reconnect.
 * Runs after the header render, which rebuilds the pill.
 */
export function renderStale(body: HTMLElement, feed: HTMLElement, staleSince: number | undefined): void {
  body.classList.toggle('is-stale', staleSince !== undefined);
  if (staleSince === undefined) {
    delete body.dataset.staleSince;
    feed.removeAttribute('title');
    return;
  }
  const since = formatClock(staleSince);
  body.dataset.staleSince = String(staleSince);
  feed.append(el('span', { class: 'feed-since' }, `since ${since}`));
  feed.title = `No live connection to the hub since ${since}: the panels show what was known then.`;
}
