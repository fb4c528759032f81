import type { AgentRunInput, AgentRunner, AgentRunResult } from '../../src/agents/agent-runner.js';

/** What a {@link FakeAgentRunner} answers: a partial result (the rest is a clean exit 0) or a throw. */
export type FakeTurn = (input: AgentRunInput) => Partial<AgentRunResult> | Promise<Partial<AgentRunResult>>;

/** An in-process AgentRunner for unit tests: records every input and answers through `turn`. */
export class FakeAgentRunner implements AgentRunner {
  readonly backend = 'scripted' as const;
  readonly inputs: AgentRunInput[] = [];
  readonly #turn: FakeTurn;

  constructor(turn: FakeTurn = () => ({})) {
    this.#turn = turn;
  }

  async run(input: AgentRunInput): Promise<AgentRunResult> {
    this.inputs.push(input);
    const partial = await this.#turn(input);
    return {
      backend: 'scripted',
      text: '',
      exitCode: 0,
      signal: null,
      isError: false,
      timedOut: false,
      canceled: false,
      durationMs: 0,
      stderrTail: '',
      isOutputTruncated: false,
      ...partial,
    };
  }

  available(): Promise<{ ready: boolean; reasons: string[] }> {
    return Promise.resolve({ ready: true, reasons: [] });
  }
}
