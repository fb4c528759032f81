import type { AgentRunner } from '../../agents/agent-runner.js';
import type { Logger } from '../../core/logger.js';
import { aggregateResults } from './aggregate-results.js';
import {
  AGENT_BUBBLE_MS,
  AGENT_BUBBLE_TYPE,
  bubbleTexts,
  PHASE_BUBBLE_MS,
  phaseBubbleText,
  type BubbleSink,
} from './bubble-text.js';
import { decompose } from './decomposition.js';
import { dispatchPhase, type SubtaskDispatcher } from './phase-dispatch.js';
import type { CollectedEntry, TaskInput, TaskOutcome } from './result-doc.js';

/** Collaborators of {@link ThreePhaseTeam}. */
export interface ThreePhaseTeamOptions {
  /** The manager-tier runner used for decomposition. */
  readonly managerRunner: AgentRunner;
  readonly workerCount: number;
  readonly dispatcher: SubtaskDispatcher;
  /** Absolute path of the manager instructions file `yadoran.md`. */
  readonly instructionsFile: string;
  readonly onBubble: BubbleSink;
  readonly logger: Logger;
  /** Decomposition LLM timeout; default 120 s. */
  readonly decompositionTimeoutMs?: number;
}

/**
 * The three-phase pattern (yadon-agents): a manager decomposes a job with its LLM into phases
 * (implement → docs → review), runs the phases in order and each phase's subtasks in parallel on N
 * workers through a {@link SubtaskDispatcher}, then aggregates. Gateway-agnostic: it never sees a socket.
 */
export class ThreePhaseTeam {
  readonly #options: ThreePhaseTeamOptions;
  readonly #log: Logger;

  constructor(options: ThreePhaseTeamOptions) {
    this.#options = options;
    this.#log = options.logger.child({ component: 'team.three-phase' });
  }

  /**
   * Runs one job to its aggregated `result` (spec yadon.md 4.3): bubbles for the job, each phase and the
   * end; a failing phase never stops later ones. Resolves `canceled` only when `signal` aborts.
   * Never rejects.
   */
  async runJob(job: TaskInput, signal: AbortSignal): Promise<TaskOutcome> {
    const { workerCount } = this.#options;
    this.#bubble(bubbleTexts.jobReceived(job.instruction), AGENT_BUBBLE_MS);
    const plan = await decompose({
      runner: this.#options.managerRunner,
      request: {
        instruction: job.instruction,
        projectDir: job.projectDir,
        workerCount,
        instructionsFile: this.#options.instructionsFile,
      },
      signal,
      ...(this.#options.decompositionTimeoutMs !== undefined && {
        timeoutMs: this.#options.decompositionTimeoutMs,
      }),
    });
    if (plan === 'canceled') return { kind: 'canceled' };
    this.#log.info(
      {
        taskId: job.id,
        phases: plan.phases.map((p) => `${p.name}:${p.subtasks.length}`),
        strategy: plan.strategy,
        fallbackReason: plan.fallbackReason,
      },
      plan.fallbackReason === undefined ? 'job decomposed' : 'decomposition fell back to one subtask',
    );
    const entries: CollectedEntry[] = [];
    for (const phase of plan.phases) {
      if (signal.aborted) return { kind: 'canceled' };
      this.#bubble(
        phaseBubbleText(phase.name, Math.min(phase.subtasks.length, workerCount)),
        PHASE_BUBBLE_MS,
      );
      const collected = await dispatchPhase({
        dispatcher: this.#options.dispatcher,
        jobId: job.id,
        phase,
        workerCount,
        projectDir: job.projectDir,
        signal,
      });
      entries.push(...collected);
    }
    if (signal.aborted) return { kind: 'canceled' };
    const doc = aggregateResults(job.id, entries);
    this.#bubble(bubbleTexts.jobDone(doc.payload.summary, doc.status === 'success'), AGENT_BUBBLE_MS);
    return { kind: 'done', doc };
  }

  #bubble(text: string, durationMs: number): void {
    this.#options.onBubble({ pet: 'yadoran', text, bubbleType: AGENT_BUBBLE_TYPE, durationMs });
  }
}
