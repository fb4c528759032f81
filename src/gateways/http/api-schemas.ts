import * as z from 'zod';

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
  currentTask: z.string().optional(),
  bubble: z.string().optional(),
  lastSeen: z.number(),
});
const agent = agentRecord.extend({ spend });
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
