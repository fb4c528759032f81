import * as z from 'zod';

// What a turn's transcript records: one summary per turn and its entries, as the turn log stores them and
// the HTTP API serves them (re-exported by gateways/http/api-schemas.ts, so the page parses the same shape).
// Only zod here: the dashboard bundles this file.

const usage = z.object({ inputTokens: z.number(), outputTokens: z.number(), costUsd: z.number() });

export const TURN_STATES = [
  'running',
  'succeeded',
  'failed',
  'timed_out',
  'cancelled',
  'interrupted',
] as const;

export const turnSummary = z.object({
  id: z.string(),
  agent: z.string(),
  backend: z.string(),
  team: z.string().optional(),
  run: z.string().optional(),
  phase: z.string().optional(),
  subtask: z.string().optional(),
  state: z.enum(TURN_STATES),
  startedAt: z.number(),
  endedAt: z.number().optional(),
  /** When the turn last showed a sign of life (an event from the CLI). */
  lastEventAt: z.number(),
  /**
   * When the process running the turn last wrote its record (every 30 s while it runs): a `running`
   * turn without a recent heartbeat lost its hub, and is shown `interrupted`.
   */
  heartbeatAt: z.number(),
  /** The head of the prompt (500 characters) and its whole length. */
  prompt: z.string(),
  promptChars: z.number(),
  /** The head of the final answer, or why it failed. */
  outcome: z.string().optional(),
  usage,
  toolCalls: z.number(),
  entries: z.number(),
  /** The newest tool call, question or message of a running turn. */
  activity: z.object({ kind: z.string(), text: z.string(), at: z.number() }).optional(),
});
export type TurnSummary = z.infer<typeof turnSummary>;

export const transcriptEntry = z.discriminatedUnion('kind', [
  z.object({ n: z.number(), at: z.number(), kind: z.literal('started'), command: z.string() }),
  z.object({ n: z.number(), at: z.number(), kind: z.literal('message'), text: z.string() }),
  z.object({
    n: z.number(),
    at: z.number(),
    kind: z.literal('tool'),
    callId: z.string().optional(),
    name: z.string(),
    toolKind: z.string(),
    summary: z.string(),
    input: z.string(),
  }),
  z.object({
    n: z.number(),
    at: z.number(),
    kind: z.literal('tool_result'),
    callId: z.string().optional(),
    isError: z.boolean(),
    output: z.string(),
  }),
  z.object({ n: z.number(), at: z.number(), kind: z.literal('usage'), usage }),
  z.object({ n: z.number(), at: z.number(), kind: z.literal('error'), message: z.string() }),
  z.object({ n: z.number(), at: z.number(), kind: z.literal('waiting'), question: z.string() }),
  z.object({ n: z.number(), at: z.number(), kind: z.literal('stopping'), reason: z.string() }),
  z.object({
    n: z.number(),
    at: z.number(),
    kind: z.literal('finished'),
    state: z.enum(TURN_STATES),
    text: z.string(),
  }),
]);
export type TranscriptEntry = z.infer<typeof transcriptEntry>;
