import { activityOf, type ActivityView } from './agent-activity.js';
import { el, replaceChildren } from './dom.js';
import type { PageState } from './page-state.js';
import { clip, formatAgo, formatCount, formatUsd, hueOf, initialOf } from './text-format.js';
import type { Agent, MailboxCounts } from '../gateways/http/api-schemas.js';

/** What an agent card does when used. */
export interface AgentActions {
  /** Opens the agent's turns. */
  open(name: string): void;
}

/** The words before an activity's detail: the tool, the question, the last sign of life. */
const DETAIL_LEAD: Readonly<Record<ActivityView['state'], string>> = {
  working: 'now',
  waiting: 'asks',
  stalled: 'last',
  idle: 'last',
  stopped: 'last',
  error: 'error',
};

/** The state pill: icon and word, so the state never rests on colour alone. */
export function activityPill(activity: ActivityView, className = 'state-pill'): HTMLElement {
  return el(
    'span',
    { class: `${className} act-${activity.state}`, data: { activity: activity.state } },
    el('span', { class: 'act-icon', aria: { hidden: 'true' } }, activity.icon),
    activity.label,
  );
}

function activityLine(activity: ActivityView): HTMLElement | null {
  if (activity.detail === undefined || activity.detail === '') return null;
  return el(
    'div',
    { class: `agent-doing doing-${activity.state}`, title: activity.detail },
    el('span', { class: 'doing-lead' }, `${DETAIL_LEAD[activity.state]} `),
    clip(activity.detail, 140),
  );
}

function emptyState(): HTMLElement {
  return el(
    'div',
    { class: 'empty', data: { testid: 'agents-empty' } },
    el('div', { class: 'empty-mark', aria: { hidden: 'true' } }, '結'),
    el('p', { class: 'empty-title' }, 'No agents yet'),
    el(
      'p',
      { class: 'empty-hint' },
      'Agents appear here as soon as they connect through any gateway — agent_sync, yadon, IGNITE, N.E.K.O. or MCP.',
    ),
  );
}

function bubbleOf(agent: Agent, state: PageState, nowMs: number): HTMLElement | null {
  const transient = state.bubbles.get(agent.name);
  const isFresh = transient !== undefined && transient.untilMs > nowMs;
  const text = isFresh ? transient.text : agent.bubble;
  if (text === undefined || text === '') return null;
  return el('div', { class: isFresh ? 'bubble fresh' : 'bubble', title: text }, clip(text, 180));
}

function mailboxLine(box: MailboxCounts | undefined): HTMLElement {
  const waiting = box === undefined ? 0 : box.ready + box.delayed;
  const inFlight = box?.leased ?? 0;
  const dead = box?.deadLetters ?? 0;
  return el(
    'div',
    { class: 'agent-mail' },
    el(
      'span',
      { class: waiting > 0 ? 'chip chip-queue' : 'chip chip-quiet', title: 'messages waiting' },
      `✉ ${waiting}`,
    ),
    inFlight > 0
      ? el('span', { class: 'chip chip-lease', title: 'leased, in progress' }, `⟳ ${inFlight}`)
      : null,
    dead > 0 ? el('span', { class: 'chip chip-dead', title: 'dead letters' }, `☠ ${dead}`) : null,
  );
}

function card(
  agent: Agent,
  state: PageState,
  box: MailboxCounts | undefined,
  nowMs: number,
  actions: AgentActions,
): HTMLElement {
  const activity = activityOf(agent);
  const node = el(
    'article',
    {
      class: `agent-card state-${agent.state} act-${activity.state}`,
      data: { agent: agent.name, activity: activity.state, key: `agent:${agent.name}` },
    },
    el(
      'header',
      { class: 'agent-head' },
      el('div', { class: 'avatar', aria: { hidden: 'true' } }, initialOf(agent.name)),
      el(
        'div',
        { class: 'agent-id' },
        el(
          'button',
          {
            class: 'agent-name',
            type: 'button',
            title: `${agent.name}: open its turns`,
            aria: { label: `${agent.name}: open turns` },
            onClick: () => actions.open(agent.name),
          },
          agent.name,
        ),
        el(
          'div',
          { class: 'agent-meta' },
          el('span', { class: `proto proto-${agent.protocol}` }, agent.protocol),
          agent.role === undefined ? null : el('span', {}, agent.role),
          agent.team === undefined ? null : el('span', { class: 'muted' }, `· ${agent.team}`),
        ),
      ),
      activityPill(activity),
    ),
    activityLine(activity),
    bubbleOf(agent, state, nowMs),
    agent.currentTask === undefined
      ? null
      : el(
          'div',
          { class: 'agent-task', title: agent.currentTask },
          el('span', { class: 'muted' }, 'task '),
          clip(agent.currentTask, 80),
        ),
    el(
      'footer',
      { class: 'agent-foot' },
      mailboxLine(box),
      el(
        'span',
        {
          class: 'agent-spend',
          title: `${agent.spend.inputTokens} in / ${agent.spend.outputTokens} out tokens`,
        },
        agent.spend.runs === 0
          ? ''
          : `${formatCount(agent.spend.inputTokens + agent.spend.outputTokens)} tok · ${formatUsd(agent.spend.costUsd)}`,
      ),
      el(
        'span',
        { class: 'muted seen', title: new Date(agent.lastSeen).toLocaleString() },
        formatAgo(agent.lastSeen, nowMs),
      ),
    ),
  );
  node.style.setProperty('--hue', String(hueOf(agent.name)));
  return node;
}

/**
 * Renders the agent cards, or the empty state when the directory has none (or is still loading). Each
 * card's name is a button that opens the agent's turns.
 */
export function renderAgents(
  container: HTMLElement,
  state: PageState,
  nowMs: number,
  actions: AgentActions,
): void {
  const agents = state.agents?.agents;
  if (agents === undefined) {
    replaceChildren(container, el('div', { class: 'loading' }, 'Loading agents…'));
    return;
  }
  if (agents.length === 0) {
    replaceChildren(container, emptyState());
    return;
  }
  const boxes = new Map(state.mailboxes.map((b) => [b.mailbox, b]));
  replaceChildren(container, ...agents.map((a) => card(a, state, boxes.get(a.name), nowMs, actions)));
}
