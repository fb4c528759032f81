import { renderAgents } from './agents-view.js';
import { ApiError, type ApiClient } from './api-client.js';
import { byId, el } from './dom.js';
import type { FeedStatus } from './event-feed.js';
import { renderHeader } from './header-view.js';
import type { LogFilter } from './message-log.js';
import { renderMessageLog } from './message-log-view.js';
import { createPageState, type PageState } from './page-state.js';
import { renderDeadLetters, renderQueues } from './queues-view.js';
import { RefreshScheduler } from './refresh-scheduler.js';
import { renderStale } from './stale-view.js';
import { renderTasks } from './tasks-view.js';
import { renderTeams } from './teams-view.js';
import {
  agentRecord,
  agentsReply,
  anyReply,
  deadLettersReply,
  leasesReply,
  mailboxesReply,
  messagesReply,
  tasksReply,
  teamsReply,
  type BusEvent,
} from '../gateways/http/api-schemas.js';

type Topic = 'agents' | 'queues' | 'tasks' | 'teams' | 'messages';
type Section = 'agents' | 'queues' | 'tasks' | 'teams' | 'log' | 'header';

const BUBBLE_MIN_MS = 6_000;

/**
 * Owns the page: state, fetches, live events, actions and rendering. Renders are batched into one
 * animation frame; refreshes are coalesced per topic. Failed fetches show a toast and retry on the
 * next event or reconnect.
 */
export class PageController {
  readonly state: PageState = createPageState();
  readonly #api: ApiClient;
  readonly #onAgentsLoaded: () => void;
  readonly #dirty = new Set<Section>();
  readonly #refresh: RefreshScheduler<Topic>;
  #frame = 0;
  /** When the live feed went down (the page's data may be old since then); undefined while live. */
  #staleSince: number | undefined;

  /** `onAgentsLoaded` runs after each agent list refresh (the say form's recipients follow it). */
  constructor(api: ApiClient, onAgentsLoaded: () => void) {
    this.#api = api;
    this.#onAgentsLoaded = onAgentsLoaded;
    this.#refresh = new RefreshScheduler<Topic>({
      run: (topic) => this.#load(topic),
      onError: (topic, err) => this.toast(`Could not load ${topic}: ${errorText(err)}`, 'error'),
      delayMs: 120,
    });
  }

  /** Loads every snapshot (at start-up and on each reconnect). */
  async refreshAll(): Promise<void> {
    await Promise.all(
      (['agents', 'queues', 'tasks', 'teams', 'messages'] as const).map((t) => this.#refresh.now(t)),
    );
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

  /** Applies one live bus event: the log directly, snapshots by a coalesced refresh. */
  onEvent(event: BusEvent): void {
    if (event.type.startsWith('message.') || event.type === 'escalation') {
      if (this.state.log.apply(event)) this.#mark('log');
      if (event.type === 'message.sent') this.#refresh.request('messages');
      this.#refresh.request('queues');
    } else if (event.type.startsWith('agent.')) {
      this.#applyAgentEvent(event);
      this.#refresh.request('agents');
    } else if (event.type.startsWith('task.')) this.#refresh.request('tasks');
    else if (event.type.startsWith('team.')) this.#refresh.request('teams');
    else if (event.type.startsWith('budget.')) this.#refresh.request('agents');
  }

  /**
   * Runs every few seconds: re-renders everything that shows relative times, and refetches the queues
   * when they may have changed without an event (a shown lease ran out, a delayed message came due).
   */
  tick(): void {
    this.#redraw();
    const now = Date.now();
    const s = this.state;
    const mayHaveMoved = s.leases.some((l) => l.leaseUntil <= now) || s.mailboxes.some((b) => b.delayed > 0);
    if (s.feed === 'live' && mayHaveMoved) this.#refresh.request('queues');
  }

  filterChanged(): void {
    this.#mark('log');
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

  /** Shows a short notice in the corner. */
  toast(text: string, tone: 'ok' | 'error'): void {
    const node = el(
      'div',
      { class: `toast toast-${tone}`, aria: { live: tone === 'error' ? 'assertive' : 'polite' } },
      text,
    );
    byId('toasts').appendChild(node);
    setTimeout(() => node.remove(), tone === 'error' ? 6_000 : 3_000);
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
    for (const s of ['agents', 'queues', 'tasks', 'teams'] as const) this.#mark(s);
  }

  #applyAgentEvent(event: BusEvent): void {
    const data = event.data ?? {};
    const name =
      typeof data.agent === 'string' ? data.agent : typeof data.name === 'string' ? data.name : undefined;
    if (name === undefined) return;
    if (event.type === 'agent.bubble' && typeof data.text === 'string') {
      const duration = typeof data.durationMs === 'number' ? data.durationMs : 0;
      this.state.bubbles.set(name, {
        text: data.text,
        untilMs: Date.now() + Math.max(BUBBLE_MIN_MS, duration),
      });
    }
    const agents = this.state.agents?.agents;
    const index = agents?.findIndex((a) => a.name === name) ?? -1;
    const record = agentRecord.safeParse(data);
    if (event.type === 'agent.status_changed' && agents !== undefined && index >= 0 && record.success) {
      // Show the change at once; the refresh that follows brings spend and anything else.
      const spend = agents[index]?.spend ?? { inputTokens: 0, outputTokens: 0, costUsd: 0, runs: 0 };
      agents[index] = { ...record.data, spend };
    }
    this.#mark('agents');
  }

  async #load(topic: Topic): Promise<void> {
    const s = this.state;
    if (topic === 'agents') {
      s.agents = await this.#api.get('/api/agents', agentsReply);
      this.#onAgentsLoaded();
      this.#mark('agents', 'header');
    } else if (topic === 'queues') {
      const [boxes, leases, dead] = await Promise.all([
        this.#api.get('/api/mailboxes', mailboxesReply),
        this.#api.get('/api/leases', leasesReply),
        this.#api.get('/api/dead-letters', deadLettersReply),
      ]);
      [s.mailboxes, s.leases, s.deadLetters] = [boxes.mailboxes, leases.leases, dead.deadLetters];
      this.#mark('queues', 'agents', 'header');
    } else if (topic === 'tasks') {
      s.tasks = await this.#api.get('/api/tasks', tasksReply);
      this.#mark('tasks', 'header');
    } else if (topic === 'teams') {
      s.teams = (await this.#api.get('/api/teams', teamsReply)).teams;
      this.#mark('teams');
    } else {
      const after = s.log.coveredCursor === 0 ? '' : `?after=${s.log.coveredCursor}`;
      const reply = await this.#api.get(`/api/messages${after}`, messagesReply);
      s.log.merge(reply.messages);
      s.log.coveredCursor = Math.max(s.log.coveredCursor, reply.cursor);
      this.#mark('log');
    }
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
    const s = this.state;
    const now = Date.now();
    const dirty = new Set(this.#dirty);
    this.#dirty.clear();
    if (dirty.has('header')) {
      renderHeader(byId('stats'), byId('feed-status'), s);
      renderStale(document.body, byId('feed-status'), this.#staleSince);
    }
    if (dirty.has('agents')) renderAgents(byId('agents'), s, now);
    if (dirty.has('teams')) renderTeams(byId('teams'), s.teams, now);
    if (dirty.has('tasks'))
      renderTasks(byId('tasks'), s.tasks, s.busyActions, { cancel: (id) => void this.cancelTask(id) }, now);
    if (dirty.has('queues')) {
      renderQueues(byId('queues'), s.mailboxes, s.leases, now);
      renderDeadLetters(
        byId('dead-letters'),
        s.deadLetters,
        s.busyActions,
        {
          retry: (id) => void this.retryDeadLetter(id),
          discard: (id) => void this.discardDeadLetter(id),
        },
        now,
      );
    }
    if (dirty.has('log')) renderMessageLog(byId('log'), s.log, readFilter());
    if (dirty.has('agents')) byId('agents-count').textContent = String(s.agents?.agents.length ?? '');
  }
}

function readFilter(): LogFilter {
  const value = (id: string): string => {
    const node = document.getElementById(id);
    return node instanceof HTMLInputElement ? node.value.trim() : '';
  };
  return { agent: value('filter-agent'), type: value('filter-type'), thread: value('filter-thread') };
}

function errorText(err: unknown): string {
  if (err instanceof ApiError) return `${err.message} (${err.code})`;
  return err instanceof Error ? err.message : String(err);
}
