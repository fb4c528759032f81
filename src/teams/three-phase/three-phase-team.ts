import type { AgentTurn } from '../../agents/agent-turn.js';
import type { Logger } from '../../core/logger.js';
import { decompose, planPrompt, type PlanPrompt } from './decomposition.js';
import { dispatchPhase, type SubtaskDispatcher } from './phase-dispatch.js';
import type { JobPlan } from './plan-extraction.js';

/** A job as the team gets it. */
export interface ThreePhaseJob {
  readonly id: string;
  readonly instruction: string;
  /** Absolute working directory of the job. */
  readonly projectDir: string;
}

/** One phase as it starts: its name, its position in the plan, how many subtasks and workers it uses. */
export interface PhaseStart {
  readonly name: string;
  /** 0-based position in the plan. */
  readonly index: number;
  readonly phaseCount: number;
  readonly subtaskCount: number;
  /** min(subtasks, workers): how many workers the phase starts at once. */
  readonly workers: number;
}

/** The entries one phase collected, in subtask order. */
export interface PhaseResult<R> {
  readonly name: string;
  readonly entries: readonly R[];
}

/**
 * What the team reports while it works; every callback is optional and must not throw. The yadon
 * gateway turns them into pet bubbles, `musubi run` into progress and bus events.
 */
export interface ThreePhaseObserver<R> {
  jobStarted?(job: ThreePhaseJob): void;
  planned?(job: ThreePhaseJob, plan: JobPlan): void;
  phaseStarted?(job: ThreePhaseJob, phase: PhaseStart): void;
  phaseFinished?(job: ThreePhaseJob, phase: PhaseResult<R>): void;
}

/** Collaborators of {@link ThreePhaseTeam}; `R` is what the dispatcher collects per subtask. */
export interface ThreePhaseTeamOptions<R> {
  /** The manager's agent turn, used for decomposition. */
  readonly manager: AgentTurn;
  readonly workerCount: number;
  readonly dispatcher: SubtaskDispatcher<R>;
  /** The decomposition prompt; default {@link planPrompt}. */
  readonly planPrompt?: PlanPrompt;
  readonly observer?: ThreePhaseObserver<R>;
  readonly logger: Logger;
  /** Decomposition turn timeout; default 120 s. */
  readonly decompositionTimeoutMs?: number;
}

/** What the wire side of a three-phase team supplies: everything but the manager's turn and the logger. */
export type ThreePhaseWiring<R> = Omit<ThreePhaseTeamOptions<R>, 'manager' | 'logger'>;

/**
 * Builds a three-phase team from its wiring. The hub makes one from config (the manager's runner from
 * its one runner factory) and hands it to whichever gateway, or command, drives the team.
 */
export type ThreePhaseTeamFactory = <R>(wiring: ThreePhaseWiring<R>) => ThreePhaseTeam<R>;

/** How a job ended: every phase's entries with the plan they came from, or cancelled. */
export type ThreePhaseOutcome<R> =
  | { readonly kind: 'done'; readonly plan: JobPlan; readonly phases: readonly PhaseResult<R>[] }
  | { readonly kind: 'canceled' };

/**
 * The three-phase pattern (from yadon-agents): a manager decomposes a job with one agent turn into
 * phases (implement → docs → review), the team runs the phases in order and each phase's subtasks in
 * parallel on N workers through a {@link SubtaskDispatcher}, and hands back every entry. Free of any
 * wire: the prompt wording, what a subtask's entry is and how the entries are reported are the
 * caller's (the yadon gateway aggregates them into its result document; `musubi run` merges worktrees).
 */
export class ThreePhaseTeam<R> {
  readonly #options: ThreePhaseTeamOptions<R>;
  readonly #log: Logger;

  constructor(options: ThreePhaseTeamOptions<R>) {
    this.#options = options;
    this.#log = options.logger.child({ component: 'team.three-phase' });
  }

  /**
   * Runs one job: decomposition, then each phase; a failing phase never stops later ones. Resolves
   * `canceled` only when `signal` aborts. Never rejects (unless an observer throws).
   */
  async runJob(job: ThreePhaseJob, signal: AbortSignal): Promise<ThreePhaseOutcome<R>> {
    this.#options.observer?.jobStarted?.(job);
    const plan = await this.plan(job, signal);
    if (plan === 'canceled') return { kind: 'canceled' };
    const phases: PhaseResult<R>[] = [];
    for (const index of plan.phases.keys()) {
      if (signal.aborted) return { kind: 'canceled' };
      const result = await this.runPhase(job, plan, index, signal);
      if (result === 'canceled') return { kind: 'canceled' };
      phases.push(result);
    }
    if (signal.aborted) return { kind: 'canceled' };
    return { kind: 'done', plan, phases };
  }

  /**
   * The decomposition step alone: one manager turn, the plan it gave (or the one-subtask fallback).
   * A driver that keeps its own state (`musubi run`, resumable) calls this and {@link runPhase} itself.
   */
  async plan(job: ThreePhaseJob, signal: AbortSignal): Promise<JobPlan | 'canceled'> {
    const { workerCount, observer } = this.#options;
    const request = { instruction: job.instruction, projectDir: job.projectDir, workerCount };
    const plan = await decompose({
      turn: this.#options.manager,
      prompt: (this.#options.planPrompt ?? planPrompt)(request),
      request,
      signal,
      ...(this.#options.decompositionTimeoutMs !== undefined && {
        timeoutMs: this.#options.decompositionTimeoutMs,
      }),
    });
    if (plan === 'canceled') return plan;
    this.#log.info(
      {
        taskId: job.id,
        phases: plan.phases.map((p) => `${p.name}:${p.subtasks.length}`),
        strategy: plan.strategy,
        fallbackReason: plan.fallbackReason,
      },
      plan.fallbackReason === undefined ? 'job decomposed' : 'decomposition fell back to one subtask',
    );
    observer?.planned?.(job, plan);
    return plan;
  }

  /** Runs phase `index` of `plan`: its subtasks in parallel on the workers, their entries in order. */
  async runPhase(
    job: ThreePhaseJob,
    plan: JobPlan,
    index: number,
    signal: AbortSignal,
  ): Promise<PhaseResult<R> | 'canceled'> {
    const { workerCount, observer } = this.#options;
    const phase = plan.phases[index];
    if (phase === undefined) throw new RangeError(`the plan has no phase ${index}`);
    observer?.phaseStarted?.(job, {
      name: phase.name,
      index,
      phaseCount: plan.phases.length,
      subtaskCount: phase.subtasks.length,
      workers: Math.min(phase.subtasks.length, workerCount),
    });
    const entries = await dispatchPhase({
      dispatcher: this.#options.dispatcher,
      jobId: job.id,
      phase,
      workerCount,
      projectDir: job.projectDir,
      signal,
    });
    if (entries === 'canceled') return entries;
    const result = { name: phase.name, entries };
    observer?.phaseFinished?.(job, result);
    return result;
  }
}
