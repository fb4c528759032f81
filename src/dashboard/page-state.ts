import type { FeedStatus } from './event-feed.js';
import { MessageLog } from './message-log.js';
import type {
  AgentsReply,
  DeadLetter,
  Lease,
  MailboxCounts,
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
  readonly bubbles: Map<string, TransientBubble>;
  feed: FeedStatus;
  /** Ids with a retry, discard or cancel request in flight (their buttons are disabled). */
  readonly busyActions: Set<string>;
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
    bubbles: new Map(),
    feed: 'connecting',
    busyActions: new Set(),
  };
}
