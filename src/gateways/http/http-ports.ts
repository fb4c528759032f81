import { z } from 'zod';
import type { AgentRecord } from '../../bus/agent-directory.js';
import type { TranscriptEntry, TurnSummary } from '../../agents/turns/turn-record.js';
import type { RunView } from './api-schemas.js';

/**
 * One task as the dashboard shows it. The hub adapts the task registry's rows to this shape; the
 * gateway validates every row it is given and leaves out (and logs) rows that do not fit.
 * `state` is free text so new registry states show up as they are; the page knows `queued`, `running`,
 * `blocked`, `completed`, `failed` and `cancelled`. `progress` is a fraction from 0 to 1.
 */
export const taskViewSchema = z.object({
  id: z.string().min(1).max(256),
  state: z.string().min(1).max(64),
  title: z.string().max(2000).optional(),
  kind: z.string().max(128).optional(),
  agent: z.string().max(128).optional(),
  channel: z.string().max(128).optional(),
  progress: z.number().min(0).max(1).optional(),
  detail: z.string().max(4000).optional(),
  createdAt: z.number().optional(),
  /** When the task last started running (elapsed time is counted from here). */
  startedAt: z.number().optional(),
  updatedAt: z.number().optional(),
});
export type TaskView = z.infer<typeof taskViewSchema>;

/**
 * The narrow task port the HTTP gateway needs (the task registry satisfies it through a small adapter).
 * `cancel` resolves the task as it stands after the request; it throws NOT_FOUND for an unknown id.
 * Cancelling a task that already ended resolves it unchanged (the page shows its real state).
 */
export interface TaskSource {
  list(): Promise<readonly TaskView[]>;
  cancel(id: string): Promise<TaskView>;
}

/**
 * One team as the dashboard shows it: its pattern and where it stands. `phases` lists the pattern's
 * phases in order (for the timeline); `phase` is the current one.
 */
export const teamViewSchema = z.object({
  id: z.string().min(1).max(256),
  pattern: z.string().min(1).max(64),
  phase: z.string().max(64).optional(),
  round: z.number().int().nonnegative().optional(),
  implementer: z.string().max(128).optional(),
  phases: z.array(z.string().max(64)).max(32).optional(),
  members: z.array(z.string().max(128)).max(256).optional(),
  goal: z.string().max(2000).optional(),
  updatedAt: z.number().optional(),
});
export type TeamView = z.infer<typeof teamViewSchema>;

/** Something that knows teams (a coordination pattern's registry); the hub passes one per pattern. */
export interface TeamSource {
  list(): Promise<readonly TeamView[]>;
}

/** The agents port: the AgentDirectory satisfies it. */
export interface AgentSource {
  list(): Promise<readonly AgentRecord[]>;
}

/** The turn log as the gateway reads it (the hub's `TurnLog` satisfies it). */
export interface TurnSource {
  /** Turns, newest first. */
  list(query: {
    readonly agent?: string | undefined;
    readonly run?: string | undefined;
    readonly since?: number | undefined;
    readonly limit?: number | undefined;
  }): Promise<readonly TurnSummary[]>;
  /** One turn with its transcript; NOT_FOUND for an unknown turn. */
  get(id: string): Promise<{
    readonly turn: TurnSummary;
    readonly entries: readonly TranscriptEntry[];
    readonly droppedEntries: number;
  }>;
}

/** What starting a run from the page may say; the rest comes from the hub's config. */
export interface RunRequestView {
  readonly goal: string;
  readonly team?: string | undefined;
  readonly agent?: string | undefined;
  readonly workers?: number | undefined;
  readonly test?: string | undefined;
  readonly budgetUsd?: number | undefined;
}

/**
 * The runs of `musubi run` as the gateway sees them (the hub adapts its run ledger and run starter).
 * Every method resolves records in the {@link RunView} shape of api-schemas.ts; `get`, `stop` and
 * `resume` throw RUN_NOT_FOUND for an unknown run.
 */
export interface RunSource {
  /** Whether runs can be started here, and why not. */
  status(): Promise<{ readonly canStart: boolean; readonly reason?: string }>;
  list(): Promise<readonly RunView[]>;
  get(id: string): Promise<RunView>;
  /** Starts a run in the background; resolves its first record. */
  start(request: RunRequestView): Promise<RunView>;
  /** Stops a run this hub is running (it stays resumable); resolves the record as it stands. */
  stop(id: string): Promise<RunView>;
  /** Resumes a stopped or interrupted run in the background. */
  resume(id: string): Promise<RunView>;
}
