import { activityOf } from './agent-activity.js';
import type { PageState } from './page-state.js';
import { formatCount, formatUsd } from './text-format.js';

/** One counter of the top bar: a value and a label that together say what is counted. */
export interface HeadlineCount {
  readonly id: string;
  readonly value: string;
  readonly label: string;
  readonly title: string;
  readonly tone: '' | 'tone-busy' | 'tone-bad';
}

/** The top bar's counters, worded so each reads as a phrase ("3 of 6" "agents working"). */
export function headlineCounts(state: Pick<PageState, 'agents' | 'mailboxes' | 'tasks'>): HeadlineCount[] {
  const agents = state.agents?.agents ?? [];
  const working = agents.filter((a) => activityOf(a).state === 'working').length;
  const waiting = state.mailboxes.reduce((n, b) => n + b.ready + b.delayed, 0);
  const inFlight = state.mailboxes.reduce((n, b) => n + b.leased, 0);
  const dead = state.mailboxes.reduce((n, b) => n + b.deadLetters, 0);
  const totals = state.agents?.totals;
  const tokens = totals === undefined ? 0 : totals.inputTokens + totals.outputTokens;
  const running = state.tasks?.tasks.filter((t) => t.state === 'running').length ?? 0;
  const plural = (n: number, one: string, many: string): string => (n === 1 ? one : many);
  return [
    agents.length === 0
      ? { id: 'agents', value: '0', label: 'agents connected', title: 'No agent is known yet', tone: '' }
      : {
          id: 'agents',
          value: `${working} of ${agents.length}`,
          label: `${plural(agents.length, 'agent', 'agents')} working`,
          title: `${working} of ${agents.length} agents are working now`,
          tone: working > 0 ? 'tone-busy' : '',
        },
    {
      id: 'queued',
      value: formatCount(waiting),
      label: `${plural(waiting, 'message', 'messages')} queued`,
      title: 'Messages waiting in mailboxes (ready or delayed)',
      tone: '',
    },
    {
      id: 'in-flight',
      value: formatCount(inFlight),
      label: 'being handled',
      title: 'Messages leased by an agent, in progress',
      tone: '',
    },
    {
      id: 'dead',
      value: formatCount(dead),
      label: plural(dead, 'dead letter', 'dead letters'),
      title: 'Messages that failed every attempt',
      tone: dead > 0 ? 'tone-bad' : '',
    },
    {
      id: 'tasks',
      value: String(running),
      label: `${plural(running, 'task', 'tasks')} running`,
      title: 'Tasks running now',
      tone: '',
    },
    {
      id: 'tokens',
      value: formatCount(tokens),
      label: 'tokens used',
      title: `${totals?.inputTokens ?? 0} input and ${totals?.outputTokens ?? 0} output tokens, all agents`,
      tone: '',
    },
    {
      id: 'cost',
      value: formatUsd(totals?.costUsd ?? 0),
      label: 'spent',
      title: 'What all agents have cost so far',
      tone: '',
    },
  ];
}
