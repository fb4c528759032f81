import { unlink } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentRunInput, AgentRunner, AgentRunResult } from '../../src/agents/agent-runner.js';

/** One recorded turn of a {@link FakeIgniteRunners} agent. */
export interface FakeTurn {
  readonly agent: string;
  readonly prompt: string;
  readonly sessionId: string | undefined;
  /** The absolute file named by the delivery prompt. */
  readonly file: string;
  /** performance.now() when the turn started. */
  readonly startedAt: number;
}

/** What a fake turn does: wait, delete the message file, then succeed or fail. */
export interface FakeBehaviour {
  readonly delayMs?: number;
  /** Finish only once this settles. */
  readonly until?: Promise<unknown>;
  readonly isFailure?: boolean;
  readonly isTimeout?: boolean;
  /** Delete the message file as real agents do (default true). */
  readonly isDeleting?: boolean;
}

const PROMPT = /^新しいメッセージが来ました。(.+) を読んで処理してください。$/;

/**
 * In-process agent runners for queue-monitor tests: every turn is recorded, then behaves as
 * `behaviour(turn)` says (default: delete the file and succeed at once). Honours the abort signal.
 */
export class FakeIgniteRunners {
  readonly turns: FakeTurn[] = [];
  behaviour: (turn: FakeTurn) => FakeBehaviour = () => ({});
  #running = 0;
  maxConcurrent = 0;

  /** The runner of one agent. */
  runnerFor(agent: string): AgentRunner {
    return {
      backend: 'scripted',
      available: () => Promise.resolve({ ready: true, reasons: [] }),
      run: (input) => this.#run(agent, input),
    };
  }

  /** Turns of one agent, in order. */
  turnsOf(agent: string): FakeTurn[] {
    return this.turns.filter((t) => t.agent === agent);
  }

  async #run(agent: string, input: AgentRunInput): Promise<AgentRunResult> {
    const file = PROMPT.exec(input.prompt)?.[1] ?? '';
    const turn: FakeTurn = {
      agent,
      prompt: input.prompt,
      sessionId: input.sessionId,
      file,
      startedAt: performance.now(),
    };
    this.turns.push(turn);
    this.#running++;
    this.maxConcurrent = Math.max(this.maxConcurrent, this.#running);
    const b = this.behaviour(turn);
    try {
      if (b.delayMs !== undefined)
        await sleep(b.delayMs, undefined, input.signal ? { signal: input.signal } : {}).catch(
          () => undefined,
        );
      if (b.until !== undefined) await b.until;
      if (b.isDeleting !== false && b.isFailure !== true) await unlink(file).catch(() => undefined);
    } finally {
      this.#running--;
    }
    const isError = b.isFailure === true || b.isTimeout === true;
    return {
      backend: 'scripted',
      text: isError ? 'failed' : 'done',
      exitCode: isError ? 1 : 0,
      signal: null,
      isError,
      timedOut: b.isTimeout === true,
      canceled: false,
      durationMs: 0,
      stderrTail: '',
      isOutputTruncated: false,
      ...(input.sessionId !== undefined && { sessionId: input.sessionId }),
    };
  }
}
