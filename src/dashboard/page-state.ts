import type { FeedStatus } from './event-feed.js';
import { MessageLog } from './message-log.js';
import { TurnStore } from './turn-store.js';
import type {
  AgentsReply,
  DeadLetter,
  InboxReply,
  Lease,
  MailboxCounts,
  RunsReply,
  TasksReply,
  Team,
} from '../gateways/http/api-schemas.js';

/** A short-lived speech bubble from an `agent.bubble` event (yadon pets), shown until `untilMs`. */
export interface TransientBubble {
  readonly text: string;
  readonly untilMs: number;
}

/** Everything the page shows, replaced piecewise as snapshots arrive and events stream in. */
export interface PageState {
  agents: AgentsReply | undefined;
  mailboxes: readonly MailboxCounts[];
  leases: readonly Lease[];
  deadLetters: readonly DeadLetter[];
  tasks: TasksReply | undefined;
  teams: readonly Team[];
  readonly log: MessageLog;
  /** Every agent's turns (timeline, cost charts, agent drawers). */
  readonly turns: TurnStore;
  /** Undefined until loaded (or when the hub has no runs route). */
  runs: RunsReply | undefined;
  inbox: InboxReply | undefined;
  readonly bubbles: Map<string, TransientBubble>;
  feed: FeedStatus;
  /** Ids with a retry, discard, cancel, stop or resume request in flight (their buttons are disabled). */
  readonly busyActions: Set<string>;
  /** Teams whose whole goal is shown. */
  readonly expandedGoals: Set<string>;
  /** The timeline's span: the last this many ms, or everything loaded. */
  timelineRangeMs: number | undefined;
}

/** A fresh, empty page state. */
export function createPageState(): PageState {
  return {
    agents: undefined,
    mailboxes: [],
    leases: [],
    deadLetters: [],
    tasks: undefined,
    teams: [],
    log: new MessageLog(),
    turns: new TurnStore(),
    runs: undefined,
    inbox: undefined,
    bubbles: new Map(),
    feed: 'connecting',
    busyActions: new Set(),
    expandedGoals: new Set(),
    timelineRangeMs: undefined,
  };
}
