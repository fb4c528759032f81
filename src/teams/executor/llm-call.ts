import type { AgentRunner, AgentRunResult } from '../../agents/agent-runner.js';
import type { Clock } from '../../core/clock.js';
import { turnFailureReason } from '../../agents/failure-reason.js';

/** Attempts of one LLM call, and the waits before the second and third. */
const RETRY_WAITS_MS = [1_000, 2_000] as const;
const RETRYABLE =
  /rate.?limit|\b429\b|\b5\d\d\b|overloaded|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|connection/i;

/** Where and how long the executor's LLM turns run. */
export interface LlmSettings {
  readonly runner: AgentRunner;
  /** Working directory of the turns (must exist). */
  readonly cwd: string;
  readonly timeoutMs: number;
  readonly clock: Clock;
}

/** The answer of one LLM call, or why there is none (the reason names `error`, `timed out` or `failed`). */
export type LlmAnswer =
  { readonly ok: true; readonly text: string } | { readonly ok: false; readonly reason: string };

function failureOf(result: AgentRunResult): string | undefined {
  if (result.timedOut) return 'assessment timed out';
  if (result.canceled) return 'assessment cancelled';
  if (!result.isError) return undefined;
  const why = turnFailureReason(result);
  return `assessment failed: ${why || `exit ${String(result.exitCode)}`}`;
}

function wait(clock: Clock, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = clock.setTimer(done, ms);
    function done(): void {
      timer.cancel();
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * One LLM turn through an agent runner: up to 3 attempts, waiting 1 s then 2 s, retried only on
 * connection, 5xx or rate-limit failures. Never rejects: failures resolve `{ ok: false, reason }`.
 */
export async function askLlm(
  settings: LlmSettings,
  prompt: string,
  signal?: AbortSignal,
): Promise<LlmAnswer> {
  let reason = 'assessment failed';
  for (let attempt = 0; attempt <= RETRY_WAITS_MS.length; attempt++) {
    if (signal?.aborted === true) return { ok: false, reason: 'assessment cancelled' };
    try {
      const result = await settings.runner.run({
        prompt,
        cwd: settings.cwd,
        timeoutMs: settings.timeoutMs,
        ...(signal !== undefined && { signal }),
      });
      const failure = failureOf(result);
      if (failure === undefined) return { ok: true, text: result.text };
      reason = failure;
      if (!RETRYABLE.test(`${result.stderrTail}\n${result.text}`)) break;
    } catch (err) {
      reason = `assessment error: ${err instanceof Error ? err.message : String(err)}`;
      if (!RETRYABLE.test(reason)) break;
    }
    const waitMs = RETRY_WAITS_MS[attempt];
    if (waitMs === undefined) break;
    await wait(settings.clock, waitMs, signal);
  }
  return { ok: false, reason };
}
