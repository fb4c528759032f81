import { z } from 'zod';

/** The phases of a round, in cycle order, plus SHUTDOWN. */
export const PHASES = ['IMPLEMENT', 'TEST', 'DISCUSS', 'SHUTDOWN'] as const;
export type Phase = (typeof PHASES)[number];

/** True when `value` names one of {@link PHASES}. */
export function isPhase(value: unknown): value is Phase {
  return typeof value === 'string' && (PHASES as readonly string[]).includes(value);
}

/**
 * A discuss-done mark whose identity the team does not interpret (callers may mark for names that are
 * not members): `key` decides equality, `label` is the caller's own rendering, shown back as is.
 */
export const opaqueSchema = z.strictObject({ key: z.string(), label: z.string() });
export type Opaque = z.infer<typeof opaqueSchema>;

const agentSchema = z.strictObject({
  name: z.string(),
  joinedAtMs: z.number(),
  lastHeartbeatMs: z.number().optional(),
});
/** A joined agent. Agents are never removed; a re-join replaces the record in place. */
export type AgentRecord = z.infer<typeof agentSchema>;

/** The persisted state of one rounds team (one KV value, so every change commits atomically). */
export const roundsStateSchema = z.strictObject({
  version: z.literal(1),
  phase: z.enum(PHASES),
  round: z.number().int().min(1),
  implementer: z.string(),
  agents: z.array(agentSchema),
  discussDone: z.array(opaqueSchema),
  /** The latest test result as the caller rendered it, or null. */
  testResult: z.string().nullable(),
});
export type RoundsState = z.infer<typeof roundsStateSchema>;

/** The state a team starts from (and returns to on reset). */
export function initialRoundsState(): RoundsState {
  return {
    version: 1,
    phase: 'IMPLEMENT',
    round: 1,
    implementer: '',
    agents: [],
    discussDone: [],
    testResult: null,
  };
}

/** One discussion log entry: its round (for filtering) and the caller's rendering of it. */
export const discussionEntrySchema = z.strictObject({ round: z.number().int(), label: z.string() });
export type DiscussionEntry = z.infer<typeof discussionEntrySchema>;

/** A phase change the caller must announce to `recipients` (every joined agent, in join order). */
export interface PhaseChange {
  readonly from: Phase;
  readonly to: Phase;
  /** The round after any increment made by the same operation. */
  readonly round: number;
  readonly recipients: readonly string[];
}
