import type { AgentRunInput, AgentRunner, AgentRunResult } from '../../agents/agent-runner.js';

/** Callbacks around every turn of one runner; they must not throw. */
export interface TurnObserver {
  onStart?(input: AgentRunInput): void;
  /** After a turn resolved; a turn that rejected (could not start) is reported with `result` undefined. */
  onEnd?(input: AgentRunInput, result: AgentRunResult | undefined): void;
}

/**
 * Wraps `runner` so `observer` sees each turn start and end. The turn itself is unchanged: same input,
 * same result, same rejection. This is how the demo follows a team's progress without the team
 * knowing about it.
 */
export function observeTurns(runner: AgentRunner, observer: TurnObserver): AgentRunner {
  return {
    backend: runner.backend,
    available: () => runner.available(),
    async run(input) {
      observer.onStart?.(input);
      let result: AgentRunResult | undefined;
      try {
        result = await runner.run(input);
        return result;
      } finally {
        observer.onEnd?.(input, result);
      }
    },
  };
}

/**
 * Fault injection for the demo: the first `count` turns of the returned runner fail at once (exit code
 * 1, `isError`, `reason` as the reply) without running `runner`, so no agent CLI is started and no
 * tokens are spent; every later turn runs `runner` normally. The counter belongs to this wrapper only.
 */
export function failFirstTurns(runner: AgentRunner, count: number, reason: string): AgentRunner {
  let failed = 0;
  return {
    backend: runner.backend,
    available: () => runner.available(),
    run(input) {
      if (failed >= count) return runner.run(input);
      failed++;
      return Promise.resolve({
        backend: runner.backend,
        text: reason,
        exitCode: 1,
        signal: null,
        isError: true,
        timedOut: false,
        canceled: false,
        durationMs: 0,
        stderrTail: '',
        isOutputTruncated: false,
      });
    },
  };
}
