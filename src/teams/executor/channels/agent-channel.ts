import type { AgentRunner } from '../../../agents/agent-runner.js';
import type { Channel, ChannelAvailability, ChannelGroup, ChannelRunResult } from '../channel.js';
import { turnFailureReason } from '../../../agents/failure-reason.js';

/** Default limit of one agent turn started by a task. */
export const DEFAULT_AGENT_TASK_TIMEOUT_MS = 600_000;

/** Settings of {@link createAgentChannel}. */
export interface AgentChannelOptions {
  readonly id: string;
  readonly description: string;
  readonly runner: AgentRunner;
  /** Working directory of the turns. */
  readonly cwd: string;
  readonly group?: ChannelGroup;
  readonly timeoutMs?: number;
}

/**
 * A CLI coding agent as a channel (group `browser_use`, mutex: one task at a time per agent): one
 * musubi agent-runner turn with the instruction as prompt. Cancel aborts the turn (the runner's stop
 * ladder). Assistant messages become progress. Ready iff the CLI is installed.
 */
export function createAgentChannel(options: AgentChannelOptions): Channel {
  return {
    id: options.id,
    kind: 'cli-agent',
    group: options.group ?? 'browser_use',
    concurrency: 'mutex',
    description: options.description,
    async isAvailable(): Promise<ChannelAvailability> {
      const a = await options.runner.available();
      return { ready: a.ready, reasons: [...a.reasons] };
    },
    async run(task, run): Promise<ChannelRunResult> {
      let step = 0;
      const result = await options.runner.run({
        prompt: task.instruction,
        cwd: options.cwd,
        timeoutMs: options.timeoutMs ?? DEFAULT_AGENT_TASK_TIMEOUT_MS,
        signal: run.signal,
        onEvent: (event) => {
          if (event.type === 'message')
            run.onProgress({ stage: 'agent', message: event.text.slice(0, 500), step: ++step });
        },
      });
      const text = result.text.trim();
      if (result.timedOut)
        return { success: false, summary: 'Timed out', error: 'Timed out', status: 'failed' };
      if (result.canceled)
        return { success: false, summary: 'Cancelled', error: 'Cancelled', status: 'cancelled' };
      if (!result.isError) return { success: true, summary: text || 'done', detail: text };
      const why = turnFailureReason(result);
      const error = `${options.runner.backend} failed${why === '' ? '' : `: ${why}`}`;
      return { success: false, summary: text || error, error, status: 'failed' };
    },
    cancel: () => Promise.resolve(), // the run's AbortSignal stops the turn
  };
}
