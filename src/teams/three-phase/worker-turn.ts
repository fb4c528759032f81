import type { AgentRunner } from '../../agents/agent-runner.js';
import { AGENT_BUBBLE_MS, AGENT_BUBBLE_TYPE, bubbleTexts, type BubbleSink } from './bubble-text.js';
import { runLlmTurn } from './llm-turn.js';
import { resultDoc, summarize, type TaskInput, type TaskOutcome } from './result-doc.js';

/** Default worker LLM timeout (spec yadon.md 2.5). */
const WORKER_LLM_TIMEOUT_MS = 600_000;

/** Collaborators of {@link runWorkerTurn}. */
export interface WorkerTurnOptions {
  readonly runner: AgentRunner;
  /** n of `yadon-<n>`. */
  readonly workerNumber: number;
  /** Absolute path of the worker instructions file `yadon.md`. */
  readonly instructionsFile: string;
  readonly timeoutMs?: number;
  readonly onBubble: BubbleSink;
}

/**
 * The worker prompt (musubi's own wording): it names the worker ヤドン<n>, points to `yadon.md` and gives
 * the instruction verbatim after a `タスク:` line. No prose line starts with a word of the scripted
 * agent's instruction language, so the scripted agent sees only the task's own instructions.
 */
export function workerPrompt(workerNumber: number, instructionsFile: string, instruction: string): string {
  return [
    `あなたはヤドン${workerNumber} (yadon-${workerNumber}) です。ヤドラン (yadoran) から任された作業をしてください。`,
    `Your standing instructions are in ${instructionsFile}; follow them.`,
    'Do the task below in the current directory, then answer with a short report of what you did.',
    '',
    'タスク:',
    instruction,
  ].join('\n');
}

/**
 * Executes one subtask as worker n (spec yadon.md 4.2): "task received" bubble, one worker-tier LLM turn
 * in `projectDir`, then a `result` with status `success` iff the exit code is 0, the full output and a
 * 200-code-point summary, and the done/failed bubble. A crashed or cancelled turn is passed on to the
 * caller (retry / restart rules) without a result. Never rejects.
 */
export async function runWorkerTurn(
  options: WorkerTurnOptions,
  task: TaskInput,
  signal: AbortSignal,
): Promise<TaskOutcome> {
  const pet = String(options.workerNumber);
  const bubble = (text: string): void =>
    options.onBubble({ pet, text, bubbleType: AGENT_BUBBLE_TYPE, durationMs: AGENT_BUBBLE_MS });
  bubble(bubbleTexts.workerReceived(task.instruction));
  const turn = await runLlmTurn(options.runner, {
    prompt: workerPrompt(options.workerNumber, options.instructionsFile, task.instruction),
    cwd: task.projectDir,
    timeoutMs: options.timeoutMs ?? WORKER_LLM_TIMEOUT_MS,
    signal,
  });
  if (turn.kind !== 'finished') return turn;
  const isSuccess = turn.exitCode === 0;
  const summary = summarize(turn.output);
  bubble(bubbleTexts.workerDone(summary, isSuccess));
  return {
    kind: 'done',
    doc: resultDoc({
      id: task.id,
      from: `yadon-${options.workerNumber}`,
      status: isSuccess ? 'success' : 'error',
      payload: { output: turn.output, summary },
    }),
  };
}
