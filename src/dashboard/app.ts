import * as z from 'zod';
import { ApiClient } from './api-client.js';
import { byId, el } from './dom.js';
import { EventFeed } from './event-feed.js';
import { PageController, type RunStartRequest } from './page-controller.js';
import { ViewTabs } from './view-tabs.js';
import { healthReply, sayReply } from '../gateways/http/api-schemas.js';

// The page's CSP has no 'unsafe-eval': zod must not try to compile validators with `new Function`.
z.config({ jitless: true });

const TICK_MS = 5_000;
const RETRY_START_MS = 2_000;

/** Keeps the say form's recipient list in step with the agents, keeping the current choice. */
function syncRecipients(controller: PageController): void {
  const select = byId('say-to');
  if (!(select instanceof HTMLSelectElement)) return;
  const names = (controller.state.agents?.agents ?? []).map((a) => a.name);
  const wanted = ['*', ...names];
  const have = [...select.options].map((o) => o.value);
  if (wanted.join('\n') === have.join('\n')) return;
  const current = select.value;
  select.replaceChildren(...wanted.map((n) => el('option', { value: n }, n === '*' ? 'everyone' : n)));
  select.value = wanted.includes(current) ? current : '*';
}

function wireSayForm(api: ApiClient, controller: PageController): void {
  const form = byId('say-form');
  const text = byId('say-text');
  const to = byId('say-to');
  if (
    !(form instanceof HTMLFormElement) ||
    !(text instanceof HTMLInputElement) ||
    !(to instanceof HTMLSelectElement)
  )
    return;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const message = text.value.trim();
    if (message === '') return;
    const button = form.querySelector('button');
    if (button !== null) button.disabled = true;
    api
      .post('/api/say', sayReply, { to: to.value, text: message })
      .then((reply) => {
        text.value = '';
        controller.toast(`Sent to ${reply.sent.map((s) => s.to).join(', ')}`, 'ok');
      })
      .catch((err: unknown) => controller.toast(err instanceof Error ? err.message : String(err), 'error'))
      .finally(() => {
        if (button !== null) button.disabled = false;
      });
  });
}

function wireFilters(controller: PageController): void {
  for (const id of ['filter-agent', 'filter-type', 'filter-thread']) {
    byId(id).addEventListener('input', () => controller.filterChanged());
  }
  const range = byId('timeline-range');
  if (range instanceof HTMLSelectElement)
    range.addEventListener('change', () => {
      const ms = Number(range.value);
      controller.setTimelineRange(range.value === '' || !Number.isFinite(ms) ? undefined : ms);
    });
}

/** The start form's fields as a run request: empty fields are left out (the hub's defaults apply). */
function readRunForm(form: HTMLFormElement): RunStartRequest | undefined {
  const field = (name: string): string => {
    const node = form.elements.namedItem(name);
    return node instanceof HTMLInputElement || node instanceof HTMLTextAreaElement ? node.value.trim() : '';
  };
  const goal = field('goal');
  if (goal === '') return undefined;
  const team = field('team');
  const agent = field('agent');
  const test = field('test');
  const workers = Number(field('workers'));
  const budgetUsd = Number(field('budgetUsd'));
  return {
    goal,
    ...(team !== '' && { team }),
    ...(agent !== '' && { agent }),
    ...(field('workers') !== '' && Number.isInteger(workers) && { workers }),
    ...(test !== '' && { test }),
    ...(field('budgetUsd') !== '' && Number.isFinite(budgetUsd) && { budgetUsd }),
  };
}

function wireRunForm(controller: PageController): void {
  const form = byId('run-form');
  if (!(form instanceof HTMLFormElement)) return;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const request = readRunForm(form);
    if (request === undefined) return;
    void controller.startRun(request).then((isStarted) => {
      if (isStarted) form.reset();
    });
  });
}

/** Starts the page: first snapshot, then the live feed; retries with backoff while the hub is down. */
async function start(api: ApiClient, controller: PageController, delayMs = RETRY_START_MS): Promise<void> {
  let cursor: number;
  try {
    cursor = (await api.get('/api/health', healthReply)).cursor;
    await controller.refreshAll();
  } catch (err) {
    controller.setFeed('reconnecting');
    controller.toast(
      `Hub not reachable (${err instanceof Error ? err.message : String(err)}); retrying`,
      'error',
    );
    setTimeout(() => void start(api, controller, Math.min(delayMs * 2, 30_000)), delayMs);
    return;
  }
  // Opened without the token (or with one of an earlier start): the page shows how to get it, no feed.
  if (controller.isLocked) return;
  let isFirstOpen = true;
  const feed = new EventFeed(cursor, {
    onEvent: (event) => controller.onEvent(event),
    onStatus: (status) => controller.setFeed(status),
    onOpen: (isReset) => {
      if (isReset) controller.resetLog();
      const isFirst = isFirstOpen;
      isFirstOpen = false;
      // The first connection follows the snapshot just loaded; every later one may have missed changes.
      if (!isFirst || isReset) void controller.refreshAll();
    },
  });
  controller.onLocked(() => feed.close());
}

const api = new ApiClient();
const controller: PageController = new PageController(api, () => syncRecipients(controller));
wireSayForm(api, controller);
wireFilters(controller);
wireRunForm(controller);
new ViewTabs((view) => controller.showView(view));
setInterval(() => {
  if (document.visibilityState === 'visible') {
    controller.tick();
  }
}, TICK_MS);
void start(api, controller);
