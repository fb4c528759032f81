import type { AgentTurn } from '../../agents/agent-turn.js';
import { fallbackPlan, planFromOutput, type JobPlan } from './plan-extraction.js';

/** Default decomposition turn timeout (spec yadon.md 2.5). */
const DECOMPOSITION_TIMEOUT_MS = 120_000;

/** What a decomposition prompt needs. */
export interface PlanRequest {
  readonly instruction: string;
  readonly projectDir: string;
  readonly workerCount: number;
}

/** Writes the manager's decomposition prompt; each gateway words its own (yadon's names its roles). */
export type PlanPrompt = (request: PlanRequest) => string;

/**
 * The plain decomposition prompt, for teams no wire prescribes. Like every decomposition prompt it puts
 * the task between `<task>` and `</task>` and says `at most <N> subtasks`, which is what the scripted
 * agent's fixed-rule decomposition looks for (docs/agents.md).
 */
export const planPrompt: PlanPrompt = (request) =>
  [
    `You are the manager of ${request.workerCount} worker(s). Split the task below into phases for them.`,
    ...planBody(request),
  ].join('\n');

/** Everything of a decomposition prompt after its opening lines: the directory, the task, the rules. */
export function planBody(request: PlanRequest): string[] {
  return [
    '',
    `Working directory: ${request.projectDir}`,
    '',
    '<task>',
    request.instruction,
    '</task>',
    '',
    ...planRules(request.workerCount),
  ];
}

/** The answer format and rules every decomposition prompt states (spec yadon.md 4.3.1). */
export function planRules(n: number): string[] {
  return [
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
  ];
}

/**
 * Runs the manager's decomposition turn (exit code ignored) and extracts the plan; the turn failing
 * (spawn failure, timeout, crash) or unusable output gives the single-subtask fallback. Resolves
 * `canceled` only when `signal` aborted. Never rejects.
 */
export async function decompose(options: {
  readonly turn: AgentTurn;
  readonly prompt: string;
  readonly request: PlanRequest;
  readonly timeoutMs?: number;
  readonly signal: AbortSignal;
}): Promise<JobPlan | 'canceled'> {
  const { request } = options;
  const turn = await options.turn({
    prompt: options.prompt,
    cwd: request.projectDir,
    timeoutMs: options.timeoutMs ?? DECOMPOSITION_TIMEOUT_MS,
    signal: options.signal,
    label: { phase: 'plan' },
  });
  if (turn.kind === 'canceled') return 'canceled';
  if (turn.kind === 'crashed') return fallbackPlan(request.instruction, turn.reason);
  if (turn.hasFailed) return fallbackPlan(request.instruction, turn.output);
  return planFromOutput(turn.output, request.instruction);
}
