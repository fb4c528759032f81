import { z } from 'zod';
import type { KvState } from '../bus/bus.types.js';
import { MusubiError } from '../core/errors.js';

const usageSchema = z.object({
  inputTokens: z.number().nonnegative(),
  outputTokens: z.number().nonnegative(),
  costUsd: z.number().nonnegative(),
});

/** Tokens and cost summed over a run's turns. */
export type RunUsage = z.infer<typeof usageSchema>;

export const ZERO_USAGE: RunUsage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };

/** Adds `more` to `usage`. */
export function addUsage(usage: RunUsage, more: Partial<RunUsage> | undefined): RunUsage {
  return {
    inputTokens: usage.inputTokens + (more?.inputTokens ?? 0),
    outputTokens: usage.outputTokens + (more?.outputTokens ?? 0),
    costUsd: usage.costUsd + (more?.costUsd ?? 0),
  };
}

const subtaskSchema = z.object({
  id: z.string(),
  phase: z.string(),
  worker: z.number().int().positive(),
  instruction: z.string(),
  /** running: a turn was started and has not been recorded (a resume runs it again). */
  status: z.enum(['running', 'succeeded', 'failed']),
  branch: z.string(),
  /** The commit of the worker's changes on its branch; null when the turn changed nothing. */
  commit: z.string().nullable(),
  /** Whether the commit is in the run branch (so a resume never merges it twice). */
  isMerged: z.boolean(),
  summary: z.string(),
  /**
   * Set when the subtask failed because its turn changed nothing while an edit of it failed or was
   * refused, also after the retry that quoted it: that edit, quoted. Such a failure alone makes a run
   * that changed nothing `no-change` rather than `failed`.
   */
  refusal: z.string().optional(),
  attempts: z.number().int().nonnegative(),
  usage: usageSchema,
});

/** One subtask of a run as recorded after each step. */
export type SubtaskRecord = z.infer<typeof subtaskSchema>;

const conflictSchema = z.object({
  subtask: z.string(),
  files: z.array(z.string()),
  isResolved: z.boolean(),
});

const testsSchema = z.object({
  command: z.string(),
  exitCode: z.number().int(),
  passed: z.boolean(),
  /** The last few KiB of what the command printed. */
  outputTail: z.string(),
});

const planSchema = z.object({
  phases: z.array(z.object({ name: z.string(), subtasks: z.array(z.unknown()) })),
  strategy: z.string().optional(),
  fallbackReason: z.string().optional(),
});

/**
 * The statuses a run can be in; `running` also after a kill -9, until a resume finishes it;
 * `no-change` when it ended without any subtask committing a change (see executeRun).
 */
export const RUN_STATUSES = ['running', 'succeeded', 'failed', 'stopped', 'no-change'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** True for a run that ended for good (a resume hands it back as it is); `stopped` is resumable. */
export function isFinishedRun(status: RunStatus): boolean {
  return status === 'succeeded' || status === 'failed' || status === 'no-change';
}

const runSchema = z.object({
  id: z.string(),
  goal: z.string(),
  repo: z.string(),
  baseCommit: z.string(),
  branch: z.string(),
  team: z.string(),
  /** The agent selection as given (`--agent`, a configured agent, or the default). */
  agent: z.string().nullable(),
  workers: z.number().int().positive(),
  test: z.string().nullable(),
  budget: z.object({ usd: z.number().positive().optional(), tokens: z.number().int().positive().optional() }),
  keepWorktrees: z.boolean(),
  status: z.enum(RUN_STATUSES),
  /** Why a run failed, stopped or changed nothing, in a sentence. */
  reason: z.string().nullable(),
  createdAt: z.number(),
  updatedAt: z.number(),
  finishedAt: z.number().nullable(),
  plan: planSchema.nullable(),
  /** How many phases of the plan are done and merged into the run branch. */
  phasesDone: z.number().int().nonnegative(),
  subtasks: z.record(z.string(), subtaskSchema),
  /** Extra implement rounds given after a failing test gate. */
  fixRounds: z.number().int().nonnegative(),
  tests: testsSchema.nullable(),
  conflicts: z.array(conflictSchema),
  headCommit: z.string().nullable(),
  turns: z.number().int().nonnegative(),
  retries: z.number().int().nonnegative(),
  usage: usageSchema,
});

/** Everything about one `musubi run`: its plan, phase, subtasks, branches and usage. */
export type RunRecord = z.infer<typeof runSchema>;

/** What a new run is given; everything else starts empty. */
export type RunStart = Pick<
  RunRecord,
  'id' | 'goal' | 'repo' | 'baseCommit' | 'team' | 'agent' | 'workers' | 'test' | 'budget' | 'keepWorktrees'
>;

/** A run before its first step: on branch `musubi/<id>`, nothing planned, spent or merged. */
export function newRunRecord(start: RunStart, now: number): RunRecord {
  return {
    ...start,
    branch: `musubi/${start.id}`,
    status: 'running',
    reason: null,
    createdAt: now,
    updatedAt: now,
    finishedAt: null,
    plan: null,
    phasesDone: 0,
    subtasks: {},
    fixRounds: 0,
    tests: null,
    conflicts: [],
    headCommit: null,
    turns: 0,
    retries: 0,
    usage: ZERO_USAGE,
  };
}

const PREFIX = 'run/';

/**
 * Run records in the store's KV (`run/<id>`), written after every step so a run killed at any point
 * can be resumed from the last one. Each write is a compare-and-set on the revision this ledger last
 * saw: a second process resuming the same run at the same time fails with STORE_CONFLICT instead of
 * overwriting it.
 */
export class RunLedger {
  readonly #kv: KvState;
  readonly #revisions = new Map<string, number>();

  constructor(kv: KvState) {
    this.#kv = kv;
  }

  /** The run `id`, or RUN_NOT_FOUND. A record that no longer parses is STORE_CORRUPT, never guessed at. */
  async get(id: string): Promise<RunRecord> {
    const entry = await this.#kv.kvGet(`${PREFIX}${id}`);
    if (entry === null)
      throw new MusubiError('RUN_NOT_FOUND', `no run ${id} in this store`, { details: { id } });
    const parsed = runSchema.safeParse(entry.value);
    if (!parsed.success) {
      throw new MusubiError('STORE_CORRUPT', `run ${id}: the stored record does not parse`, {
        details: { id, issues: parsed.error.issues.slice(0, 3).map((i) => i.message) },
      });
    }
    this.#revisions.set(id, entry.revision);
    return parsed.data;
  }

  /** Every run in the store, newest first (records that do not parse are left out). */
  async list(): Promise<RunRecord[]> {
    const entries = await this.#kv.kvList(PREFIX);
    return entries
      .flatMap((e) => {
        const parsed = runSchema.safeParse(e.value);
        return parsed.success ? [parsed.data] : [];
      })
      .sort((a, b) => b.createdAt - a.createdAt);
  }

  /** Stores a new run (STORE_CONFLICT when its id exists). */
  async create(record: RunRecord): Promise<void> {
    const entry = await this.#kv.kvSet(`${PREFIX}${record.id}`, runSchema.parse(record), {
      expectedRevision: 0,
    });
    this.#revisions.set(record.id, entry.revision);
  }

  /** Stores the next state of a run this ledger created or read. */
  async save(record: RunRecord): Promise<void> {
    const expected = this.#revisions.get(record.id);
    const entry = await this.#kv.kvSet(`${PREFIX}${record.id}`, runSchema.parse(record), {
      ...(expected !== undefined && { expectedRevision: expected }),
    });
    this.#revisions.set(record.id, entry.revision);
  }
}
