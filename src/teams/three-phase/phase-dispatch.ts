import { z } from 'zod';
import type { PhasePlan } from './plan-extraction.js';
import type { CollectedEntry, TaskInput } from './result-doc.js';

/** What dispatching one subtask to one worker produced. */
export interface DispatchOutcome {
  /** The collected entry: the worker's reply unchanged, or a send-failure result. */
  readonly entry: CollectedEntry;
  /** The worker could not be reached at all (socket missing, refused): it gets no more subtasks this phase. */
  readonly isConnectionFailure: boolean;
}

/**
 * The team's only view of its workers: send one subtask to worker n and resolve what came back. The
 * yadon gateway implements it over the workers' sockets; it never rejects (failures are entries).
 */
export interface SubtaskDispatcher {
  dispatch(request: {
    readonly worker: number;
    readonly subtask: TaskInput;
    readonly signal: AbortSignal;
  }): Promise<DispatchOutcome>;
}

const subtaskSchema = z.looseObject({ instruction: z.string() });

/** The entry for a subtask that is not an object or has no string `instruction` (nothing is sent). */
function invalidSubtaskEntry(worker: number): CollectedEntry {
  return {
    type: 'result',
    id: 'unknown',
    from: `yadon-${worker}`,
    status: 'error',
    payload: { output: "'instruction'", summary: '実行エラー' },
  };
}

/**
 * Runs one phase (spec yadon.md 4.3.2): subtask j (1-based) has id `<job>-<phase>-sub<j>`; subtasks
 * 1..min(k,N) go to workers 1..min(k,N) at once; later ones wait in order for the first worker to finish.
 * A worker that could not be reached gets no more subtasks; when none is left, each waiting subtask j
 * goes to worker ((j-1) mod N)+1 anyway (and fails there the usual way). Resolves the entries in
 * subtask order, whatever the completion order.
 */
export async function dispatchPhase(options: {
  readonly dispatcher: SubtaskDispatcher;
  readonly jobId: string;
  readonly phase: PhasePlan;
  readonly workerCount: number;
  readonly projectDir: string;
  readonly signal: AbortSignal;
}): Promise<CollectedEntry[]> {
  const { dispatcher, phase, workerCount: n, signal } = options;
  const k = phase.subtasks.length;
  const entries: CollectedEntry[] = [];
  const waiting = Array.from({ length: Math.max(0, k - n) }, (_, i) => n + i);
  const usable = new Set(Array.from({ length: Math.min(k, n) }, (_, i) => i + 1));

  /** Runs subtask index j on `worker`; resolves whether the worker stays usable. */
  const runOne = async (worker: number, j: number): Promise<boolean> => {
    const parsed = subtaskSchema.safeParse(phase.subtasks[j]);
    if (!parsed.success) {
      entries[j] = invalidSubtaskEntry(worker);
      return true;
    }
    const subtask: TaskInput = {
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
  return Array.from({ length: k }, (_, j) => entries[j] ?? {});
}
