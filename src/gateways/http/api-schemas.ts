import * as z from 'zod';
import { transcriptEntry, turnSummary } from '../../agents/turns/turn-record.js';

export {
  TURN_STATES,
  transcriptEntry,
  turnSummary,
  type TranscriptEntry,
  type TurnSummary,
} from '../../agents/turns/turn-record.js';

// The replies of the HTTP API, shared by the gateway (its routes return these types) and the dashboard
// (src/dashboard parses every reply with them, so a gateway change shows up as one clear error instead
// of a broken view).

const spend = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  costUsd: z.number(),
  runs: z.number(),
});
export type Spend = z.infer<typeof spend>;

/** An agent directory record, as `agent.status_changed` events carry it. */
export const agentRecord = z.object({
  name: z.string(),
  protocol: z.string(),
  state: z.string(),
  role: z.string().optional(),
  team: z.string().optional(),
  backend: z.string().optional(),
  model: z.string().optional(),
  run: z.string().optional(),
  currentTask: z.string().optional(),
  bubble: z.string().optional(),
  lastSeen: z.number(),
});
/** What an agent is doing now, from its newest turn's events and its directory record. */
export const agentActivity = z.object({
  state: z.enum(['working', 'waiting', 'stalled', 'idle', 'stopped']),
  /** The current tool or command (working), the question (waiting), the last activity (stalled). */
  detail: z.string().optional(),
  turnId: z.string().optional(),
  since: z.number().optional(),
});
export type AgentActivity = z.infer<typeof agentActivity>;
const agent = agentRecord.extend({ spend, activity: agentActivity.optional() });
export type Agent = z.infer<typeof agent>;
export const agentsReply = z.object({ agents: z.array(agent), totals: spend });
export type AgentsReply = z.infer<typeof agentsReply>;

const mailboxCounts = z.object({
  mailbox: z.string(),
  ready: z.number(),
  delayed: z.number(),
  leased: z.number(),
  total: z.number(),
  deadLetters: z.number(),
});
export type MailboxCounts = z.infer<typeof mailboxCounts>;
export const mailboxesReply = z.object({ mailboxes: z.array(mailboxCounts) });
export type MailboxesReply = z.infer<typeof mailboxesReply>;

const lease = z.object({
  mailbox: z.string(),
  messageId: z.string(),
  from: z.string(),
  type: z.string(),
  attempt: z.number(),
  leaseUntil: z.number(),
});
export type Lease = z.infer<typeof lease>;
export const leasesReply = z.object({ leases: z.array(lease) });
export type LeasesReply = z.infer<typeof leasesReply>;

const envelope = z.object({
  id: z.string(),
  from: z.string(),
  to: z.string(),
  type: z.string(),
  priority: z.string(),
  thread: z.string().optional(),
  body: z.string(),
  attempt: z.number(),
  createdAt: z.number(),
});
const deadLetter = z.object({ mailbox: z.string(), reason: z.string(), deadAt: z.number(), envelope });
export type DeadLetter = z.infer<typeof deadLetter>;
export const deadLettersReply = z.object({ deadLetters: z.array(deadLetter) });
export type DeadLettersReply = z.infer<typeof deadLettersReply>;

const messageRow = z.object({
  cursor: z.number(),
  at: z.number(),
  mailbox: z.string(),
  messageId: z.string(),
  from: z.string(),
  type: z.string(),
  priority: z.string(),
  status: z.string(),
  attempt: z.number(),
  /** Claims after the first: nacked, lease ran out, or requeued from the dead letters. */
  retries: z.number().optional(),
  /** True once the message was dead-lettered, even if it was requeued and acked later. */
  wasDead: z.boolean().optional(),
  thread: z.string().optional(),
  bodyPreview: z.string().optional(),
});
export type MessageRow = z.infer<typeof messageRow>;
export const messagesReply = z.object({ cursor: z.number(), messages: z.array(messageRow) });
export type MessagesReply = z.infer<typeof messagesReply>;

const task = z.object({
  id: z.string(),
  state: z.string(),
  title: z.string().optional(),
  kind: z.string().optional(),
  agent: z.string().optional(),
  channel: z.string().optional(),
  progress: z.number().optional(),
  detail: z.string().optional(),
  createdAt: z.number().optional(),
  startedAt: z.number().optional(),
  updatedAt: z.number().optional(),
});
export type Task = z.infer<typeof task>;
export const tasksReply = z.object({ isAvailable: z.boolean(), tasks: z.array(task) });
export type TasksReply = z.infer<typeof tasksReply>;

const teamStep = z.object({ phase: z.string(), round: z.number().optional(), at: z.number() });
export type TeamStep = z.infer<typeof teamStep>;
const team = z.object({
  id: z.string(),
  pattern: z.string(),
  phase: z.string().optional(),
  round: z.number().optional(),
  implementer: z.string().optional(),
  phases: z.array(z.string()).optional(),
  members: z.array(z.string()).optional(),
  goal: z.string().optional(),
  updatedAt: z.number().optional(),
  history: z.array(teamStep).readonly(),
});
export type Team = z.infer<typeof team>;
export const teamsReply = z.object({ teams: z.array(team) });
export type TeamsReply = z.infer<typeof teamsReply>;

export const healthReply = z.object({ status: z.string(), cursor: z.number(), now: z.number() });
export const errorReply = z.object({ code: z.string(), message: z.string() });
export const sayReply = z.object({ sent: z.array(z.object({ to: z.string(), id: z.string() })) });
export type SayReply = z.infer<typeof sayReply>;
export const anyReply = z.unknown();

/** One bus event from the event stream: a type, a cursor, a time and type-specific fields. */
export const busEvent = z.looseObject({
  type: z.string(),
  cursor: z.number(),
  at: z.number(),
  mailbox: z.string().optional(),
  messageId: z.string().optional(),
  from: z.string().optional(),
  messageType: z.string().optional(),
  priority: z.string().optional(),
  attempt: z.number().optional(),
  data: z.record(z.string(), z.unknown()).optional(),
});
export type BusEvent = z.infer<typeof busEvent>;

// ---- Message detail and the human inbox -------------------------------------------------------------

const historyStep = z.looseObject({
  kind: z.enum([
    'sent',
    'claimed',
    'lease_extended',
    'lease_expired',
    'nacked',
    'dead_lettered',
    'escalated',
    'requeued',
    'acked',
    'discarded',
  ]),
  at: z.number(),
  mailbox: z.string(),
  from: z.string().optional(),
  holder: z.string().optional(),
  attempt: z.number().optional(),
  leaseUntil: z.number().optional(),
  delayMs: z.number().optional(),
  reason: z.string().optional(),
});
export type HistoryStepView = z.infer<typeof historyStep>;

/** What was sent: the stored envelope while it is in a mailbox, else the copy its `message.sent` kept. */
const sentEnvelope = z.object({
  id: z.string(),
  from: z.string(),
  to: z.string(),
  type: z.string(),
  priority: z.string(),
  thread: z.string().optional(),
  headers: z.record(z.string(), z.string()),
  body: z.string(),
  /** True when `body` is only the head of the body (the envelope was deleted; the log kept 4 KiB). */
  isBodyCut: z.boolean(),
  createdAt: z.number().optional(),
});
export type SentEnvelope = z.infer<typeof sentEnvelope>;

export const messageDetailReply = z.object({
  messageId: z.string(),
  /** One row per mailbox the message went to (a broadcast has several). */
  copies: z.array(messageRow),
  /** Absent when neither a mailbox nor the event log still has the message. */
  envelope: sentEnvelope.optional(),
  /** True while some mailbox still holds the envelope (waiting, leased or dead). */
  isStored: z.boolean(),
  history: z.array(historyStep),
});
export type MessageDetailReply = z.infer<typeof messageDetailReply>;

const inboxItem = messageRow.extend({
  /** What kind of message it is for a person: result, escalation, report, reply or message. */
  kind: z.string(),
  /** A one-line summary (a yadon result's summary, an IGNITE report's title, the first line). */
  title: z.string(),
});
export type InboxItem = z.infer<typeof inboxItem>;
export const inboxReply = z.object({ cursor: z.number(), items: z.array(inboxItem) });
export type InboxReply = z.infer<typeof inboxReply>;

// ---- Agent turns and transcripts ----------------------------------------------------------------------

const usage = z.object({ inputTokens: z.number(), outputTokens: z.number(), costUsd: z.number() });

export const turnsReply = z.object({ turns: z.array(turnSummary) });
export type TurnsReply = z.infer<typeof turnsReply>;
export const turnReply = z.object({
  turn: turnSummary,
  entries: z.array(transcriptEntry),
  /** Entries left out because the turn passed its bound (the oldest are kept). */
  droppedEntries: z.number(),
});
export type TurnReply = z.infer<typeof turnReply>;

// ---- Runs (`musubi run`) ----------------------------------------------------------------------------

const runSubtask = z.object({
  id: z.string(),
  phase: z.string(),
  worker: z.number(),
  instruction: z.string(),
  status: z.string(),
  branch: z.string(),
  commit: z.string().nullable(),
  isMerged: z.boolean(),
  summary: z.string(),
  attempts: z.number(),
  usage,
});
export const runView = z.object({
  id: z.string(),
  goal: z.string(),
  repo: z.string(),
  branch: z.string(),
  team: z.string(),
  agent: z.string().nullable(),
  workers: z.number(),
  test: z.string().nullable(),
  budget: z.object({ usd: z.number().optional(), tokens: z.number().optional() }),
  status: z.string(),
  reason: z.string().nullable(),
  createdAt: z.number(),
  updatedAt: z.number(),
  finishedAt: z.number().nullable(),
  plan: z
    .object({
      phases: z.array(z.object({ name: z.string(), subtasks: z.array(z.unknown()) })),
      strategy: z.string().optional(),
      fallbackReason: z.string().optional(),
    })
    .nullable(),
  phasesDone: z.number(),
  subtasks: z.array(runSubtask),
  fixRounds: z.number(),
  tests: z
    .object({ command: z.string(), exitCode: z.number(), passed: z.boolean(), outputTail: z.string() })
    .nullable(),
  conflicts: z.array(z.object({ subtask: z.string(), files: z.array(z.string()), isResolved: z.boolean() })),
  headCommit: z.string().nullable(),
  turns: z.number(),
  retries: z.number(),
  usage,
  /** True while this hub is running it (it can be stopped); false for a run another process owns or none. */
  isActive: z.boolean(),
});
export type RunView = z.infer<typeof runView>;
export const runsReply = z.object({
  /** False when this hub cannot start runs (no git repository); `reason` says why. */
  canStart: z.boolean(),
  reason: z.string().optional(),
  runs: z.array(runView),
});
export type RunsReply = z.infer<typeof runsReply>;
export const runReply = z.object({ run: runView });
export type RunReply = z.infer<typeof runReply>;
