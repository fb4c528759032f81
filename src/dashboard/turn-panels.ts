import { activityOf } from './agent-activity.js';
import type { ApiClient } from './api-client.js';
import { el, replaceChildren } from './dom.js';
import type { DrawerPanel } from './drawer.js';
import { Transcript } from './transcript.js';
import { entryNode, turnHeader, turnRow } from './transcript-view.js';
import type { TurnStore } from './turn-store.js';
import { formatClock } from './text-format.js';
import {
  transcriptEntry,
  turnReply,
  turnsReply,
  type Agent,
  type BusEvent,
} from '../gateways/http/api-schemas.js';

/** What the turn panels need from the page. */
export interface TurnPanelDeps {
  readonly api: ApiClient;
  readonly turns: TurnStore;
  readonly agent: (name: string) => Agent | undefined;
  /** Shows a turn's transcript above the current panel. */
  readonly openTurn: (turnId: string) => void;
  readonly onError: (err: unknown) => void;
  /** A panel's data arrived (the drawer reads its title again). */
  readonly onLoaded: () => void;
}

/** The agent a turn event is about (`agent.turn_started`/`_finished` carry the turn, `_event` the name). */
function eventAgent(event: BusEvent): string | undefined {
  const data = event.data ?? {};
  if (typeof data.agent === 'string') return data.agent;
  const turn = data.turn;
  return typeof turn === 'object' && turn !== null && 'agent' in turn && typeof turn.agent === 'string'
    ? turn.agent
    : undefined;
}

/** One agent's turns, newest first, each opening its transcript; follows new turns live. */
export class AgentTurnsPanel implements DrawerPanel {
  readonly view = 'agent-turns';
  readonly element: HTMLElement;
  readonly #deps: TurnPanelDeps;
  readonly #name: string;
  readonly #head = el('div', { class: 'panel-facts' });
  readonly #list = el('ol', { class: 'turn-list', id: 'turn-list', aria: { label: 'turns, newest first' } });
  readonly #status = el('p', { class: 'empty-line', role: 'status' }, 'Loading turns…');
  #isLoaded = false;

  constructor(name: string, deps: TurnPanelDeps) {
    this.#name = name;
    this.#deps = deps;
    this.element = el(
      'div',
      { class: 'drawer-panel', data: { testid: 'agent-turns', agent: name } },
      this.#head,
      el('h3', {}, 'Turns'),
      this.#status,
      this.#list,
    );
    deps.api
      .get(`/api/agents/${encodeURIComponent(name)}/turns`, turnsReply)
      .then((reply) => {
        deps.turns.merge(reply.turns);
        this.#isLoaded = true;
        this.update(Date.now());
      })
      .catch((err: unknown) => {
        this.#isLoaded = true;
        this.#status.textContent = 'Could not load the turns.';
        deps.onError(err);
      });
  }

  get title(): string {
    return `Turns of ${this.#name}`;
  }

  update(nowMs: number): void {
    const agent = this.#deps.agent(this.#name);
    const activity = agent === undefined ? undefined : activityOf(agent);
    replaceChildren(
      this.#head,
      activity === undefined
        ? null
        : el(
            'span',
            { class: `activity act-${activity.state}` },
            el('span', { class: 'icon', aria: { hidden: 'true' } }, activity.icon),
            activity.label,
          ),
      activity?.detail === undefined ? null : el('span', { class: 'activity-detail' }, activity.detail),
    );
    const turns = this.#deps.turns.forAgent(this.#name);
    if (turns.length === 0) {
      if (this.#isLoaded) this.#status.textContent = `${this.#name} has not run a turn yet.`;
      this.#status.hidden = false;
    } else this.#status.hidden = true;
    replaceChildren(this.#list, ...turns.map((t) => turnRow(t, nowMs, (id) => this.#deps.openTurn(id))));
  }

  onEvent(event: BusEvent): void {
    if (event.type.startsWith('agent.turn_') && eventAgent(event) === this.#name) this.update(Date.now());
    else if (event.type === 'agent.status_changed' && eventAgent(event) === this.#name)
      this.update(Date.now());
  }
}

/**
 * One turn's transcript: fetched once, then followed live from `agent.turn_event`s (appended in `n`
 * order, each once). While the reader is at the bottom the drawer keeps scrolling with the stream.
 */
export class TranscriptPanel implements DrawerPanel {
  readonly view = 'transcript';
  readonly element: HTMLElement;
  readonly #deps: TurnPanelDeps;
  readonly #turnId: string;
  readonly #transcript: Transcript;
  readonly #head = el('div', { class: 'turn-head-box' });
  readonly #list = el('ol', { class: 'transcript', id: 'transcript', aria: { label: 'transcript' } });
  readonly #status = el('p', { class: 'empty-line', role: 'status' }, 'Loading the transcript…');
  /** The `n` of each entry shown, in order (the list's children). */
  #shown: number[] = [];
  #loading: 'pending' | 'done' | 'failed' = 'pending';
  #headKey = '';

  constructor(turnId: string, deps: TurnPanelDeps) {
    this.#turnId = turnId;
    this.#deps = deps;
    this.#transcript = new Transcript(turnId);
    this.element = el(
      'div',
      { class: 'drawer-panel', data: { testid: 'transcript', turn: turnId } },
      this.#head,
      el('h3', {}, 'Transcript'),
      this.#status,
      this.#list,
    );
    deps.api
      .get(`/api/turns/${encodeURIComponent(turnId)}`, turnReply)
      .then((reply) => {
        deps.turns.upsert(reply.turn);
        this.#transcript.merge(reply.entries);
        this.#transcript.droppedEntries = reply.droppedEntries;
        this.#loading = 'done';
        this.update(Date.now());
        deps.onLoaded();
      })
      .catch((err: unknown) => {
        this.#loading = 'failed';
        this.#renderEntries();
        deps.onError(err);
      });
  }

  get title(): string {
    const turn = this.#deps.turns.get(this.#turnId);
    return turn === undefined ? 'Turn' : `Turn of ${turn.agent} at ${formatClock(turn.startedAt)}`;
  }

  update(nowMs: number): void {
    const turn = this.#deps.turns.get(this.#turnId);
    const headKey = turn === undefined ? '' : `${turn.state}|${turn.lastEventAt}|${Math.floor(nowMs / 1000)}`;
    if (turn !== undefined && headKey !== this.#headKey) {
      this.#headKey = headKey;
      replaceChildren(this.#head, turnHeader(turn, nowMs));
    }
    this.#renderEntries();
  }

  onEvent(event: BusEvent): void {
    const data = event.data ?? {};
    if (event.type === 'agent.turn_event' && data.turnId === this.#turnId) {
      const entry = transcriptEntry.safeParse(data.entry);
      if (entry.success && this.#transcript.add(entry.data)) this.#renderEntries();
    } else if (event.type === 'agent.turn_finished' || event.type === 'agent.turn_started') {
      this.update(Date.now());
    }
  }

  #renderEntries(): void {
    const entries = this.#transcript.list();
    this.#status.textContent = this.#statusText(entries.length);
    this.#status.hidden = this.#status.textContent === '';
    const scroller = this.element.closest('.drawer-body');
    const isAtBottom =
      scroller !== null && scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 48;
    const last = this.#shown.length - 1;
    const isAppend = last < 0 || entries[last]?.n === this.#shown[last];
    const toolName = (callId: string | undefined): string | undefined => this.#transcript.toolNameOf(callId);
    if (isAppend) {
      const fresh = entries.slice(this.#shown.length);
      if (fresh.length === 0) return;
      this.#list.append(...fresh.map((e) => entryNode(e, toolName)));
      this.#shown.push(...fresh.map((e) => e.n));
    } else {
      // An entry arrived out of order (the reply after some live ones): rebuild once.
      this.#list.replaceChildren(...entries.map((e) => entryNode(e, toolName)));
      this.#shown = entries.map((e) => e.n);
    }
    if (isAtBottom && this.#shown.length > 0 && scroller !== null && last >= 0)
      scroller.scrollTop = scroller.scrollHeight;
  }

  #statusText(count: number): string {
    if (this.#loading === 'failed' && count === 0) return 'Could not load the transcript.';
    if (count === 0) return this.#loading === 'pending' ? 'Loading the transcript…' : 'No entries yet.';
    const dropped = this.#transcript.droppedEntries;
    return dropped > 0 ? `${dropped} later entries were left out: the turn passed the hub's bound.` : '';
  }
}
