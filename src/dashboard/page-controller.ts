import { applyAgentEvent, applyTurnEvent } from './agent-events.js';
import { ApiError, type ApiClient } from './api-client.js';
import { byId, el } from './dom.js';
import { Drawer } from './drawer.js';
import { DrawerOpeners } from './drawer-openers.js';
import type { FeedStatus } from './event-feed.js';
import { InboxView } from './inbox-view.js';
import { MessageLogView } from './message-log-view.js';
import { createPageState, type PageState } from './page-state.js';
import { renderPage, type PageViews } from './page-render.js';
import { RefreshScheduler } from './refresh-scheduler.js';
import type { RunActions } from './run-facts.js';
import { loadSnapshot, TOPICS, type Section, type Topic } from './snapshot-loader.js';
import { TimelineView } from './timeline-view.js';
import { isTokenRefusal, renderTokenNeeded } from './token-needed-view.js';
import type { ViewName } from './view-tabs.js';
import { anyReply, runReply, sayReply, type BusEvent, type InboxItem } from '../gateways/http/api-schemas.js';

/** A body for `POST /api/runs`, as the start form gives it. */
export interface RunStartRequest {
  readonly goal: string;
  readonly team?: string;
  readonly agent?: string;
  readonly workers?: number;
  readonly test?: string;
  readonly budgetUsd?: number;
}

/**
 * Owns the page: state, fetches, live events, actions and rendering. Renders are batched into one
 * animation frame and skip the views not shown; refreshes are coalesced per topic. Failed fetches show
 * a toast and retry on the next event or reconnect.
 */
export class PageController {
  readonly state: PageState = createPageState();
  readonly #api: ApiClient;
  readonly #onAgentsLoaded: () => void;
  readonly #dirty = new Set<Section>();
  readonly #refresh: RefreshScheduler<Topic>;
  readonly #drawer: Drawer;
  readonly #open: DrawerOpeners;
  readonly #views: PageViews;
  readonly #runActions: RunActions;
  #view: ViewName = 'overview';
  #frame = 0;
  /** When the live feed went down (the page's data may be old since then); undefined while live. */
  #staleSince: number | undefined;
  /** True once the hub refused the page's token: the views are replaced by the notice, nothing reloads. */
  #isLocked = false;
  readonly #onLocked = new Set<() => void>();

  /** `onAgentsLoaded` runs after each agent list refresh (the say form's recipients follow it). */
  constructor(api: ApiClient, onAgentsLoaded: () => void) {
    this.#api = api;
    this.#onAgentsLoaded = onAgentsLoaded;
    this.#refresh = new RefreshScheduler<Topic>({
      run: (topic) => this.#load(topic),
      onError: (topic, err) => {
        if (isTokenRefusal(err)) this.lockForToken();
        else this.toast(`Could not load ${topic}: ${errorText(err)}`, 'error');
      },
      delayMs: 120,
    });
    this.#drawer = new Drawer({
      dialog: drawerDialog(),
      title: byId('drawer-title'),
      body: byId('drawer-body'),
      back: button('drawer-back'),
      close: button('drawer-close'),
      toasts: byId('toasts'),
    });
    this.#runActions = {
      open: (id) => this.#open.run(id),
      stop: (id) => void this.#runAction(id, 'stop'),
      resume: (id) => void this.#runAction(id, 'resume'),
    };
    const onError = (err: unknown): void => {
      if (isTokenRefusal(err)) this.lockForToken();
      else this.toast(errorText(err), 'error');
    };
    this.#open = new DrawerOpeners({
      api,
      state: this.state,
      drawer: this.#drawer,
      onError,
      runActions: this.#runActions,
    });
    const expanded = this.state.expandedGoals;
    this.#views = {
      log: new MessageLogView(byId('log'), (id) => this.#open.message(id)),
      inbox: new InboxView(byId('inbox'), {
        open: (id) => this.#open.message(id),
        reply: (item, text) => this.#reply(item, text),
      }),
      timeline: new TimelineView(byId('timeline'), byId('timeline-tip'), (id) => this.#open.turn(id)),
      drawer: this.#drawer,
      agents: { open: (name) => this.#open.agent(name) },
      teams: {
        toggleGoal: (id) => {
          if (!expanded.delete(id)) expanded.add(id);
          this.#mark('teams');
        },
      },
      tasks: { cancel: (id) => void this.cancelTask(id) },
      deadLetters: {
        retry: (id) => void this.retryDeadLetter(id),
        discard: (id) => void this.discardDeadLetter(id),
        open: (id) => this.#open.message(id),
      },
      runs: this.#runActions,
    };
    // A click anywhere on an agent card (not only its name button) opens the agent's turns.
    byId('agents').addEventListener('click', (event) => {
      const target = event.target instanceof Element ? event.target : null;
      if (target === null || target.closest('button, a, input, select, textarea') !== null) return;
      const name = target.closest<HTMLElement>('.agent-card')?.dataset.agent;
      if (name !== undefined) this.#open.agent(name);
    });
  }

  /** Loads every snapshot (at start-up and on each reconnect); nothing once the token was refused. */
  async refreshAll(): Promise<void> {
    if (this.#isLocked) return;
    await Promise.all(TOPICS.map((t) => this.#refresh.now(t)));
  }

  /** True once the hub refused the page's token (see {@link lockForToken}). */
  get isLocked(): boolean {
    return this.#isLocked;
  }

  /** Runs `listener` once when the page locks (the live feed stops). */
  onLocked(listener: () => void): void {
    this.#onLocked.add(listener);
  }

  /**
   * The hub refused the page's token (opened without it, or the hub restarted with a new one): shows
   * one notice saying how to open the page with its token instead of an error per panel. Idempotent.
   */
  lockForToken(): void {
    if (this.#isLocked) return;
    this.#isLocked = true;
    const tabs = document.querySelector<HTMLElement>('nav.tabs');
    renderTokenNeeded({
      main: byId('main'),
      hidden: [byId('feed-status'), byId('stats'), ...(tabs === null ? [] : [tabs])],
    });
    for (const listener of this.#onLocked) listener();
  }

  /** Forgets the message log (the hub's event log was replaced); the next refresh reloads it. */
  resetLog(): void {
    this.state.log.clear();
    this.#mark('log');
  }

  setFeed(status: FeedStatus): void {
    this.state.feed = status;
    if (status === 'live') this.#staleSince = undefined;
    else if (status === 'reconnecting') this.#staleSince ??= Date.now();
    this.#mark('header');
  }

  /** The tab shown changed: draw what it shows now (views not shown are not kept drawn). */
  showView(view: ViewName): void {
    this.#view = view;
    this.#mark('timeline', 'runs', 'inbox', 'log');
  }

  /** Applies one live bus event: the log and turns directly, snapshots by a coalesced refresh. */
  onEvent(event: BusEvent): void {
    const type = event.type;
    if (type.startsWith('message.') || type === 'escalation') {
      if (this.state.log.apply(event)) this.#mark('log');
      if (type === 'message.sent') this.#refresh.request('messages');
      this.#refresh.request('queues');
      if (type === 'escalation' || this.#isForInbox(event)) this.#refresh.request('inbox');
    } else if (type.startsWith('agent.turn_')) {
      const effect = applyTurnEvent(this.state, event);
      if (effect.isTurnsChanged) this.#mark('timeline');
      if (effect.isAgentChanged) this.#mark('agents', 'header');
      if (effect.isFinished) this.#refresh.request('agents');
    } else if (type.startsWith('agent.')) {
      if (applyAgentEvent(this.state, event, Date.now())) this.#mark('agents', 'header');
      this.#refresh.request('agents');
    } else if (type.startsWith('task.')) this.#refresh.request('tasks');
    else if (type.startsWith('team.')) this.#refresh.request('teams');
    else if (type.startsWith('budget.')) this.#refresh.request('agents');
    else if (type.startsWith('run.')) this.#refresh.request('runs');
    this.#drawer.onEvent(event);
  }

  /**
   * Runs every few seconds: re-renders everything that shows relative times, and refetches the queues
   * when they may have changed without an event (a shown lease ran out, a delayed message came due).
   */
  tick(): void {
    this.#redraw();
    this.#mark('timeline', 'inbox', 'drawer');
    const now = Date.now();
    const s = this.state;
    const mayHaveMoved = s.leases.some((l) => l.leaseUntil <= now) || s.mailboxes.some((b) => b.delayed > 0);
    if (s.feed === 'live' && mayHaveMoved) this.#refresh.request('queues');
  }

  filterChanged(): void {
    this.#mark('log');
  }

  /** The timeline's span changed (its select). */
  setTimelineRange(rangeMs: number | undefined): void {
    this.state.timelineRangeMs = rangeMs;
    this.#mark('timeline');
  }

  async retryDeadLetter(id: string): Promise<void> {
    await this.#act(`dead:${id}`, ['queues'], async () => {
      await this.#api.post(`/api/dead-letters/${encodeURIComponent(id)}/retry`, anyReply);
      this.toast('Dead letter requeued', 'ok');
    });
  }

  /** Deletes the dead letters of `id` for good, after the person confirms. */
  async discardDeadLetter(id: string): Promise<void> {
    if (!window.confirm(`Discard dead letter ${id}? It is deleted for good and cannot be retried.`)) return;
    await this.#act(`discard:${id}`, ['queues'], async () => {
      await this.#api.delete(`/api/dead-letters/${encodeURIComponent(id)}`, anyReply);
      this.toast('Dead letter discarded', 'ok');
    });
  }

  async cancelTask(id: string): Promise<void> {
    await this.#act(`task:${id}`, ['tasks'], async () => {
      await this.#api.post(`/api/tasks/${encodeURIComponent(id)}/cancel`, anyReply);
      this.toast('Task cancelled', 'ok');
    });
  }

  /** Starts a run from the form; resolves true when the hub took it (the run's drawer opens). */
  async startRun(request: RunStartRequest): Promise<boolean> {
    let isStarted = false;
    await this.#act('run-start', ['runs'], async () => {
      const { run } = await this.#api.post('/api/runs', runReply, request);
      isStarted = true;
      this.toast(`Run ${run.id} started`, 'ok');
      this.#open.run(run.id);
    });
    return isStarted;
  }

  /** Shows a short notice in the corner. */
  toast(text: string, tone: 'ok' | 'error'): void {
    const node = el(
      'div',
      { class: `toast toast-${tone}`, role: tone === 'error' ? 'alert' : 'status' },
      text,
    );
    byId('toasts').appendChild(node);
    setTimeout(() => node.remove(), tone === 'error' ? 6_000 : 3_000);
  }

  async #runAction(id: string, action: 'stop' | 'resume'): Promise<void> {
    await this.#act(`run-${action}:${id}`, ['runs'], async () => {
      await this.#api.post(`/api/runs/${encodeURIComponent(id)}/${action}`, runReply);
      this.toast(action === 'stop' ? `Run ${id} stopping` : `Run ${id} resumed`, 'ok');
    });
  }

  /** Replies to an inbox item's sender in its thread; resolves true once the hub took it. */
  async #reply(item: InboxItem, text: string): Promise<boolean> {
    try {
      const body = { to: item.from, text, ...(item.thread !== undefined && { thread: item.thread }) };
      await this.#api.post('/api/say', sayReply, body);
      this.toast(`Reply sent to ${item.from}`, 'ok');
      return true;
    } catch (err) {
      this.toast(errorText(err), 'error');
      return false;
    }
  }

  /** A message to the person at the page: to a mailbox the inbox holds, or to `human`, the default. */
  #isForInbox(event: BusEvent): boolean {
    if (event.type !== 'message.sent' || event.mailbox === undefined) return false;
    const items = this.state.inbox?.items ?? [];
    return event.mailbox === 'human' || items.some((i) => i.mailbox === event.mailbox);
  }

  async #act(key: string, after: readonly Topic[], work: () => Promise<void>): Promise<void> {
    if (this.state.busyActions.has(key)) return;
    this.state.busyActions.add(key);
    this.#redraw();
    try {
      await work();
    } catch (err) {
      this.toast(errorText(err), 'error');
    } finally {
      this.state.busyActions.delete(key);
      await Promise.all(after.map((t) => this.#refresh.now(t)));
      this.#redraw();
    }
  }

  #redraw(): void {
    this.#mark('agents', 'queues', 'tasks', 'teams', 'runs', 'drawer');
  }

  async #load(topic: Topic): Promise<void> {
    this.#mark(...(await loadSnapshot(this.#api, this.state, topic)));
    if (topic === 'agents') this.#onAgentsLoaded();
  }

  #mark(...sections: Section[]): void {
    for (const section of sections) this.#dirty.add(section);
    if (this.#frame !== 0) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.#render();
    });
  }

  #render(): void {
    const dirty = new Set(this.#dirty);
    this.#dirty.clear();
    const input = { state: this.state, view: this.#view, staleSince: this.#staleSince, nowMs: Date.now() };
    renderPage(dirty, input, this.#views);
  }
}

function drawerDialog(): HTMLDialogElement {
  const node = byId('drawer');
  if (!(node instanceof HTMLDialogElement)) throw new Error('#drawer must be a <dialog>');
  return node;
}

function button(id: string): HTMLButtonElement {
  const node = byId(id);
  if (!(node instanceof HTMLButtonElement)) throw new Error(`#${id} must be a <button>`);
  return node;
}

function errorText(err: unknown): string {
  if (err instanceof ApiError) return `${err.message} (${err.code})`;
  return err instanceof Error ? err.message : String(err);
}
