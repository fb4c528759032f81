import type { AgentRunner } from '../../agents/agent-runner.js';
import { runLlmTurn } from './llm-turn.js';
import { fallbackPlan, planFromOutput, type JobPlan } from './plan-extraction.js';

/** Default decomposition LLM timeout (spec yadon.md 2.5). */
const DECOMPOSITION_TIMEOUT_MS = 120_000;

/** What the decomposition prompt needs. */
export interface DecompositionRequest {
  readonly instruction: string;
  readonly projectDir: string;
  readonly workerCount: number;
  /** Absolute path of the manager instructions file `yadoran.md`. */
  readonly instructionsFile: string;
}

/**
 * The manager's decomposition prompt (spec yadon.md 4.3.1; musubi's own text). The task sits between
 * `<task>` and `</task>` and the limit reads `at most <N> subtasks`, which is what the scripted agent's
 * fixed-rule decomposition looks for (docs/agents.md).
 */
export function decompositionPrompt(request: DecompositionRequest): string {
  const n = request.workerCount;
  return [
    `You are the manager ヤドラン (yadoran). Your standing instructions are in ${request.instructionsFile}.`,
    `Split the task below into phases for your ${n} worker(s) ヤドン (yadon-1 … yadon-${n}).`,
    '',
    `Working directory: ${request.projectDir}`,
    '',
    '<task>',
    request.instruction,
    '</task>',
    '',
    'Answer with JSON only, no prose around it, in this schema:',
    '```json',
    '{"phases": [{"name": "implement", "subtasks": [{"instruction": "<complete instruction for one worker>"}]}, {"name": "docs", "subtasks": [{"instruction": "..."}]}, {"name": "review", "subtasks": [{"instruction": "..."}]}], "strategy": "<one line>"}',
    '```',
    '',
    'Rules:',
    '- Every answer contains the three phases implement, docs, review.',
    `- At most ${n} subtasks per phase; the subtasks of a phase run in parallel.`,
    '- Phases run one after another: docs starts when implement is done, review when docs is done.',
    "- Every subtask carries all the information it needs; workers do not see each other's subtasks.",
    '- The docs phase updates the project documents related to the change (README, agent instruction files).',
    '- The review phase checks the implementation and the documents for quality and consistency and reports problems.',
  ].join('\n');
}

/**
 * Runs the manager-tier decomposition turn (exit code ignored) and extracts the plan; the turn failing
 * (spawn failure, timeout, crash) or unusable output gives the single-subtask fallback. Resolves
 * `canceled` only when `signal` aborted. Never rejects.
 */
export async function decompose(options: {
  readonly runner: AgentRunner;
  readonly request: DecompositionRequest;
  readonly timeoutMs?: number;
  readonly signal: AbortSignal;
}): Promise<JobPlan | 'canceled'> {
  const { request } = options;
  const turn = await runLlmTurn(options.runner, {
    prompt: decompositionPrompt(request),
    cwd: request.projectDir,
    timeoutMs: options.timeoutMs ?? DECOMPOSITION_TIMEOUT_MS,
    signal: options.signal,
  });
  if (turn.kind === 'canceled') return 'canceled';
  if (turn.kind === 'crashed') return fallbackPlan(request.instruction, turn.reason);
  if (turn.hasFailed) return fallbackPlan(request.instruction, turn.output);
  return planFromOutput(turn.output, request.instruction);
}
