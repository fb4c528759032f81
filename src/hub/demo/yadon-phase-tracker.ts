import type { AgentRunResult } from '../../agents/agent-runner.js';
import { fallbackPlan, planFromOutput, type JobPlan } from '../../teams/three-phase/plan-extraction.js';
import type { DemoPhase, DemoProgress } from './demo-progress.js';
import type { TurnObserver } from './turn-hooks.js';
import type { YadonJobResult } from './yadon-job.js';

/** The three-phase pattern's phases, as the demo shows them. */
const YADON_PHASES = ['implement', 'docs', 'review'] as const satisfies readonly DemoPhase[];
type YadonPhase = (typeof YADON_PHASES)[number];

interface PhaseCount {
  instructions: string[];
  done: number;
  failed: number;
  isEnded: boolean;
}

function isYadonPhase(name: string): name is YadonPhase {
  return (YADON_PHASES as readonly string[]).includes(name);
}

function instructionOf(subtask: unknown): string | undefined {
  if (typeof subtask !== 'object' || subtask === null || !('instruction' in subtask)) return undefined;
  return typeof subtask.instruction === 'string' ? subtask.instruction : undefined;
}

/** The first line of an agent's answer, shortened for a progress note. */
export function shortText(text: string, max = 100): string {
  const line = text.trim().split('\n')[0]?.trim() ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * Follows the yadon team's job through its agents' turns (see `observeTurns`): the manager's
 * decomposition turn is the `plan` phase and yields the subtasks of each phase; each worker turn is
 * matched to its phase by the subtask instruction its prompt carries. The team itself knows nothing of
 * this. A crashed turn (killed by a signal) is reported and not counted: the bus retries that task.
 */
export class YadonPhaseTracker {
  readonly #progress: DemoProgress;
  readonly #instruction: string;
  readonly #phases = new Map<YadonPhase, PhaseCount>();

  constructor(options: { readonly progress: DemoProgress; readonly instruction: string }) {
    this.#progress = options.progress;
    this.#instruction = options.instruction;
  }

  /** The observer of yadoran's runner. */
  readonly manager: TurnObserver = {
    onStart: () => this.#progress.start('plan', 1, 'yadoran is splitting the goal into subtasks'),
    onEnd: (_input, result) => this.#planned(result),
  };

  /** The observer of a worker's runner. */
  worker(agent: string): TurnObserver {
    return {
      onStart: (input) => {
        const phase = this.#phaseOf(input.prompt);
        if (phase !== undefined)
          this.#progress.start(phase, this.#phases.get(phase)?.instructions.length ?? 1);
      },
      onEnd: (input, result) => this.#workerDone(agent, this.#phaseOf(input.prompt), result),
    };
  }

  /** Ends every yadon phase still open once the manager has answered the job. */
  settle(job: YadonJobResult): void {
    this.#progress.finish('plan');
    for (const phase of YADON_PHASES) {
      const count = this.#phases.get(phase);
      if (count === undefined || count.instructions.length === 0) {
        this.#progress.skip(phase, 'not part of the plan');
      } else if (job.status === 'success') this.#progress.finish(phase);
      else this.#progress.fail(phase, `the job ended ${job.status}: ${shortText(job.summary)}`);
    }
  }

  #planned(result: AgentRunResult | undefined): void {
    const plan: JobPlan =
      result === undefined || result.isError || result.timedOut
        ? fallbackPlan(this.#instruction, 'the decomposition turn failed')
        : planFromOutput(result.text, this.#instruction);
    const counts: string[] = [];
    for (const phase of plan.phases) {
      if (!isYadonPhase(phase.name)) continue;
      const instructions = phase.subtasks.flatMap((s) => instructionOf(s) ?? []);
      this.#phases.set(phase.name, { instructions, done: 0, failed: 0, isEnded: false });
      counts.push(`${instructions.length} ${phase.name}`);
    }
    const note =
      plan.fallbackReason === undefined
        ? `yadoran planned ${counts.join(', ')} subtask(s)`
        : `yadoran could not split the goal (${plan.fallbackReason}): one subtask`;
    this.#progress.finish('plan', note);
  }

  #phaseOf(prompt: string): YadonPhase | undefined {
    const open = YADON_PHASES.filter((p) => this.#phases.get(p)?.isEnded === false);
    return (
      open.find((p) => this.#phases.get(p)?.instructions.some((i) => i !== '' && prompt.includes(i))) ??
      open[0]
    );
  }

  #workerDone(agent: string, phase: YadonPhase | undefined, result: AgentRunResult | undefined): void {
    const count = phase === undefined ? undefined : this.#phases.get(phase);
    if (phase === undefined || count === undefined) return;
    if (result?.signal !== undefined && result.signal !== null) {
      this.#progress.note(phase, `${agent} crashed (${result.signal}); the bus retries its subtask`);
      return;
    }
    count.done++;
    const isOk = result !== undefined && !result.isError;
    if (!isOk) count.failed++;
    const said = result === undefined ? 'could not start' : shortText(result.text);
    this.#progress.advance(phase, `${agent} ${isOk ? 'done' : 'failed'}: ${said}`);
    if (count.done < count.instructions.length) return;
    count.isEnded = true;
    if (count.failed === 0) this.#progress.finish(phase);
    else this.#progress.fail(phase, `${count.failed} of ${count.done} subtask(s) failed`);
  }
}
