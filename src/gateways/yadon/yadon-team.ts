import type { AgentRunner } from '../../agents/agent-runner.js';
import { runTurn, type TurnTexts } from '../../agents/agent-turn.js';
import { planBody, type PlanRequest } from '../../teams/three-phase/decomposition.js';
import type { SubtaskDispatcher } from '../../teams/three-phase/phase-dispatch.js';
import type { ThreePhaseTeamFactory } from '../../teams/three-phase/three-phase-team.js';
import { aggregateResults } from './aggregate-results.js';
import {
  AGENT_BUBBLE_MS,
  AGENT_BUBBLE_TYPE,
  bubbleTexts,
  PHASE_BUBBLE_MS,
  phaseBubbleText,
  type BubbleSink,
} from './bubble-text.js';
import {
  resultDoc,
  summarize,
  type CollectedEntry,
  type ResultDoc,
  type TaskInput,
  type TaskOutcome,
} from './result-doc.js';
import { MANAGER_NAME } from './yadon-paths.js';

/** How a yadon turn that failed reads (spec yadon.md 4.5): `タイムアウト (<whole minutes>分)`, `実行エラー: …`. */
export const YADON_TURN_TEXTS: TurnTexts = {
  timedOut: (timeoutMs) => `タイムアウト (${Math.floor(timeoutMs / 60_000)}分)`,
  couldNotStart: (error) => `実行エラー: ${error}`,
};

/**
 * yadon's decomposition prompt (spec yadon.md 4.3.1; musubi's own text): the manager ヤドラン, its
 * instructions file, and the rules every decomposition prompt states.
 */
export function decompositionPrompt(request: PlanRequest & { readonly instructionsFile: string }): string {
  const n = request.workerCount;
  return [
    `You are the manager ヤドラン (yadoran). Your standing instructions are in ${request.instructionsFile}.`,
    `Split the task below into phases for your ${n} worker(s) ヤドン (yadon-1 … yadon-${n}).`,
    ...planBody(request),
  ].join('\n');
}

/** How one yadon agent executes a task it claimed. */
export type YadonExecute = (task: TaskInput, signal: AbortSignal) => Promise<TaskOutcome>;

/** What the yadon manager needs to run jobs. */
export interface YadonManagerOptions {
  /** Builds the team (the hub's, with the manager's runner). */
  readonly team: ThreePhaseTeamFactory;
  readonly workerCount: number;
  /** Where subtasks go: the workers' sockets (`createSocketSubtaskDispatcher`). */
  readonly dispatcher: SubtaskDispatcher<CollectedEntry>;
  /** Absolute path of `yadoran.md`. */
  readonly instructionsFile: string;
  readonly onBubble: BubbleSink;
  readonly decompositionTimeoutMs?: number;
}

/**
 * The manager ヤドラン (spec yadon.md 4.3): the three-phase team over the workers' sockets, worded in
 * yadon's prompts, with the job/phase/done bubbles; the entries of every phase aggregate into one
 * `result` document.
 */
export function yadonManagerExecute(options: YadonManagerOptions): YadonExecute {
  const bubble = (text: string, durationMs: number): void =>
    options.onBubble({ pet: MANAGER_NAME, text, bubbleType: AGENT_BUBBLE_TYPE, durationMs });
  const team = options.team({
    workerCount: options.workerCount,
    dispatcher: options.dispatcher,
    planPrompt: (request) => decompositionPrompt({ ...request, instructionsFile: options.instructionsFile }),
    observer: {
      jobStarted: (job) => bubble(bubbleTexts.jobReceived(job.instruction), AGENT_BUBBLE_MS),
      phaseStarted: (_job, phase) => bubble(phaseBubbleText(phase.name, phase.workers), PHASE_BUBBLE_MS),
    },
    ...(options.decompositionTimeoutMs !== undefined && {
      decompositionTimeoutMs: options.decompositionTimeoutMs,
    }),
  });
  return async (task, signal) => {
    const outcome = await team.runJob(task, signal);
    if (outcome.kind === 'canceled') return outcome;
    const doc = aggregateResults(
      task.id,
      outcome.phases.flatMap((p) => p.entries),
    );
    bubble(bubbleTexts.jobDone(doc.payload.summary, doc.status === 'success'), AGENT_BUBBLE_MS);
    return { kind: 'done', doc };
  };
}

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

/** The phase of a subtask id `<job>-<phase>-sub<j>` (the team's dispatch names them so), for the timeline. */
function phaseOf(taskId: string): { phase?: string } {
  const phase = /-([A-Za-z0-9_]+)-sub\d+$/.exec(taskId)?.[1];
  return phase === undefined ? {} : { phase };
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
  const turn = await runTurn(
    options.runner,
    {
      prompt: workerPrompt(options.workerNumber, options.instructionsFile, task.instruction),
      cwd: task.projectDir,
      timeoutMs: options.timeoutMs ?? WORKER_LLM_TIMEOUT_MS,
      signal,
      label: { subtask: task.id, ...phaseOf(task.id) },
    },
    YADON_TURN_TEXTS,
  );
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

/** Worker ヤドン<n> (spec yadon.md 4.2): one worker turn per subtask. */
export function yadonWorkerExecute(options: WorkerTurnOptions): YadonExecute {
  return (task, signal) => runWorkerTurn(options, task, signal);
}

/** The result a task gets once the bus gave up on it (its agent kept crashing). */
export function gaveUpResult(agent: string, task: TaskInput, reason: string): ResultDoc {
  const output = `エージェントが異常終了しました (${reason})。再試行の上限に達したため中止しました。`;
  return resultDoc({
    id: task.id,
    from: agent,
    status: 'error',
    payload: { output, summary: summarize(output) },
  });
}
