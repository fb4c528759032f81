import type { AgentRunInput, AgentRunner, AgentRunResult } from '../agent-runner.js';
import type { ConcurrencyLimiter } from './concurrency-limiter.js';

/**
 * Wraps a runner so at most `limiter.limit(backend)` of its backend's turns run at once across every
 * runner sharing the limiter. Waiting counts against the turn's own timeout only once it runs; an abort
 * while waiting resolves a canceled result without starting anything.
 */
export function withConcurrencyLimit(runner: AgentRunner, limiter: ConcurrencyLimiter): AgentRunner {
  return {
    backend: runner.backend,
    available: () => runner.available(),
    async run(input: AgentRunInput): Promise<AgentRunResult> {
      let release: () => void;
      try {
        release = await limiter.acquire(runner.backend, input.signal);
      } catch (err) {
        if (input.signal?.aborted !== true) throw err;
        return canceledResult(runner.backend);
      }
      try {
        return await runner.run(input);
      } finally {
        release();
      }
    },
  };
}

function canceledResult(backend: AgentRunner['backend']): AgentRunResult {
  return {
    backend,
    text: '',
    exitCode: null,
    signal: null,
    isError: true,
    timedOut: false,
    canceled: true,
    durationMs: 0,
    stderrTail: '',
    isOutputTruncated: false,
  };
}
