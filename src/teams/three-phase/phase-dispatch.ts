import { z } from 'zod';
import type { PhasePlan } from './plan-extraction.js';

/** One subtask as a worker gets it. */
export interface Subtask {
  /** `<job>-<phase>-sub<j>`. */
  readonly id: string;
  readonly instruction: string;
  /** Absolute working directory of the subtask. */
  readonly projectDir: string;
}

/** What dispatching one subtask to one worker produced; `R` is whatever the dispatcher collects. */
export interface DispatchOutcome<R> {
  /** The collected entry: for yadon the worker's reply unchanged, or a send-failure result. */
  readonly entry: R;
  /** The worker could not be reached at all (socket missing, refused): it gets no more subtasks this phase. */
  readonly isConnectionFailure: boolean;
}

/**
 * The team's only view of its workers: send one subtask to worker n and resolve what came back. The
 * yadon gateway implements it over the workers' sockets, `musubi run` with a turn in a worktree; it
 * never rejects (failures are entries).
 */
export interface SubtaskDispatcher<R> {
  dispatch(request: {
    readonly worker: number;
    readonly subtask: Subtask;
    readonly signal: AbortSignal;
  }): Promise<DispatchOutcome<R>>;
  /** The entry for a planned subtask that is not an object or has no string `instruction` (nothing is sent). */
  invalidSubtask(worker: number): R;
}

const subtaskSchema = z.looseObject({ instruction: z.string() });

/**
 * Runs one phase (spec yadon.md 4.3.2): subtask j (1-based) has id `<job>-<phase>-sub<j>`; subtasks
 * 1..min(k,N) go to workers 1..min(k,N) at once; later ones wait in order for the first worker to finish.
 * A worker that could not be reached gets no more subtasks; when none is left, each waiting subtask j
 * goes to worker ((j-1) mod N)+1 anyway (and fails there the usual way). Resolves the entries in
 * subtask order, whatever the completion order, or `canceled` when the signal aborted before every
 * subtask was dispatched.
 */
export async function dispatchPhase<R>(options: {
  readonly dispatcher: SubtaskDispatcher<R>;
  readonly jobId: string;
  readonly phase: PhasePlan;
  readonly workerCount: number;
  readonly projectDir: string;
  readonly signal: AbortSignal;
}): Promise<R[] | 'canceled'> {
  const { dispatcher, phase, workerCount: n, signal } = options;
  const k = phase.subtasks.length;
  const entries: R[] = [];
  const waiting = Array.from({ length: Math.max(0, k - n) }, (_, i) => n + i);
  const usable = new Set(Array.from({ length: Math.min(k, n) }, (_, i) => i + 1));

  /** Runs subtask index j on `worker`; resolves whether the worker stays usable. */
  const runOne = async (worker: number, j: number): Promise<boolean> => {
    const parsed = subtaskSchema.safeParse(phase.subtasks[j]);
    if (!parsed.success) {
      entries[j] = dispatcher.invalidSubtask(worker);
      return true;
    }
    const subtask: Subtask = {
      id: `${options.jobId}-${phase.name}-sub${j + 1}`,
      instruction: parsed.data.instruction,
      projectDir: options.projectDir,
    };
    const outcome = await dispatcher.dispatch({ worker, subtask, signal });
    entries[j] = outcome.entry;
    return !outcome.isConnectionFailure;
  };

  const runChain = async (worker: number, first: number): Promise<void> => {
    for (let j: number | undefined = first; j !== undefined; j = waiting.shift()) {
      if (signal.aborted) return;
      if (await runOne(worker, j)) continue;
      usable.delete(worker);
      if (usable.size === 0) {
        const rest = waiting.splice(0);
        await Promise.all(rest.map((r) => runOne((r % n) + 1, r)));
      }
      return;
    }
  };

  await Promise.all([...usable].map((worker) => runChain(worker, worker - 1)));
  const collected: R[] = [];
  for (let j = 0; j < k; j++) {
    const entry = entries[j];
    if (entry === undefined) return 'canceled';
    collected.push(entry);
  }
  return collected;
}
