import { z } from 'zod';
import type { Clock } from '../../core/clock.js';
import type { DispatchOutcome, SubtaskDispatcher } from '../../teams/three-phase/phase-dispatch.js';
import { resultDoc, type CollectedEntry, type TaskInput } from './result-doc.js';
import { TIMED_OUT_TEXT } from './os-error-text.js';
import { exchangeWithAgent } from './yadon-client.js';
import { agentSocketPath, MANAGER_NAME, workerName } from './yadon-paths.js';
import { sleep } from '../../core/sleep.js';

/** Timings of dispatch (spec yadon.md 2.5 and 4.4). */
export interface DispatchTimings {
  /** How long the manager waits for a worker's reply before polling; 630 s. */
  readonly dispatchWaitMs: number;
  /** Poll interval and per-poll deadline of `get_result`; 5 s. */
  readonly pollMs: number;
  /** A subtask still unfinished this long after dispatch is given up; 1,260 s. */
  readonly giveUpMs: number;
}

/** The timings of spec yadon.md. */
const DEFAULT_DISPATCH_TIMINGS: DispatchTimings = {
  dispatchWaitMs: 630_000,
  pollMs: 5_000,
  giveUpMs: 1_260_000,
};

const objectSchema = z.record(z.string(), z.unknown());

/** The entry for a planned subtask that is not an object or has no string `instruction` (nothing is sent). */
export function invalidSubtaskEntry(worker: number): CollectedEntry {
  return {
    type: 'result',
    id: 'unknown',
    from: workerName(worker),
    status: 'error',
    payload: { output: "'instruction'", summary: '実行エラー' },
  };
}

function sendFailure(
  subtask: TaskInput,
  worker: number,
  text: string,
  isConnectionFailure = false,
): DispatchOutcome<CollectedEntry> {
  const entry = resultDoc({
    id: subtask.id,
    from: workerName(worker),
    status: 'error',
    payload: { output: `送信失敗: ${text}`, summary: `ヤドン${worker}への送信に失敗` },
  });
  return { entry: { ...entry }, isConnectionFailure };
}

/**
 * The manager's dispatch over the workers' agent sockets: a `task` with `from: yadoran`, waiting up to
 * the dispatch wait; then `get_result` polls until the result arrives, the worker answers anything but
 * `task_state`, or the give-up time passes (spec yadon.md 4.3.2 and 4.4). Every failure becomes the
 * `送信失敗: <text>` entry; a reply that is an object (result or error) is collected unchanged.
 */
export function createSocketSubtaskDispatcher(options: {
  readonly socketDir: string;
  readonly clock: Clock;
  readonly timings?: DispatchTimings;
}): SubtaskDispatcher<CollectedEntry> {
  const { clock } = options;
  const timings = options.timings ?? DEFAULT_DISPATCH_TIMINGS;

  const poll = async (
    worker: number,
    subtask: TaskInput,
    startedAt: number,
    signal: AbortSignal,
  ): Promise<DispatchOutcome<CollectedEntry>> => {
    const path = agentSocketPath(options.socketDir, workerName(worker));
    for (;;) {
      if (clock.now() - startedAt >= timings.giveUpMs) return sendFailure(subtask, worker, TIMED_OUT_TEXT);
      await sleep(clock, timings.pollMs, signal);
      if (signal.aborted) return sendFailure(subtask, worker, TIMED_OUT_TEXT);
      const reply = await exchangeWithAgent(
        path,
        { type: 'get_result', from: MANAGER_NAME, id: subtask.id },
        { timeoutMs: timings.pollMs, clock, signal },
      );
      if (!reply.ok) return sendFailure(subtask, worker, reply.text);
      const parsed = objectSchema.safeParse(reply.value);
      if (!parsed.success || Array.isArray(reply.value))
        return sendFailure(subtask, worker, 'reply is not a JSON object');
      const { type, message } = parsed.data;
      if (type === 'task_state') continue;
      if (type === 'result') return { entry: parsed.data, isConnectionFailure: false };
      return sendFailure(subtask, worker, typeof message === 'string' ? message : 'unexpected reply');
    }
  };

  return {
    invalidSubtask: invalidSubtaskEntry,
    async dispatch({ worker, subtask, signal }): Promise<DispatchOutcome<CollectedEntry>> {
      const startedAt = clock.now();
      const request = {
        type: 'task',
        id: subtask.id,
        from: MANAGER_NAME,
        payload: { instruction: subtask.instruction, project_dir: subtask.projectDir },
      };
      const path = agentSocketPath(options.socketDir, workerName(worker));
      const reply = await exchangeWithAgent(path, request, {
        timeoutMs: timings.dispatchWaitMs,
        clock,
        signal,
      });
      if (reply.ok) {
        const entry = objectSchema.safeParse(reply.value);
        if (entry.success && !Array.isArray(reply.value))
          return { entry: entry.data, isConnectionFailure: false };
        return sendFailure(subtask, worker, 'reply is not a JSON object');
      }
      if (reply.stage !== 'timeout' || signal.aborted) {
        return sendFailure(subtask, worker, reply.text, reply.stage === 'connect');
      }
      return poll(worker, subtask, startedAt, signal);
    },
  };
}
