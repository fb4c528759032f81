import { setMaxListeners } from 'node:events';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentRunEvent, AgentRunner, TurnLabel } from '../agents/agent-runner.js';
import type { AgentTurn, TurnOutcome } from '../agents/agent-turn.js';
import type { Bus } from '../bus/bus.types.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { SecretMask } from '../core/secret-mask.js';
import { SerialQueue } from '../core/serial-queue.js';
import type { SubtaskDispatcher } from '../teams/three-phase/phase-dispatch.js';
import type { JobPlan } from '../teams/three-phase/plan-extraction.js';
import type { ThreePhaseTeam } from '../teams/three-phase/three-phase-team.js';
import type { Git } from './git.js';
import { addUsage, ZERO_USAGE, type RunLedger, type RunRecord, type SubtaskRecord } from './run-record.js';
import { runTestGate } from './test-gate.js';
import type { RunWorktrees } from './worktrees.js';
import { FailedEdits } from './failed-edits.js';
import { memberName } from './run-members.js';
import { fixPrompt, resolverPrompt, retryPrompt, workerPrompt } from './run-prompts.js';
import { endingOf, isCleanFinish } from './run-ending.js';
import { TurnDeliveries, type DeliveryProgress, type FinishedTurn, type TurnEnd } from './turn-deliveries.js';
import { RunEscalations, type AskHuman } from './turn-escalations.js';

/** What a run reports as it goes, for a terminal view and the bus. */
export type RunProgress =
  | { readonly kind: 'planned'; readonly phases: readonly { name: string; subtasks: number }[] }
  | { readonly kind: 'phase'; readonly name: string; readonly index: number; readonly count: number }
  | {
      readonly kind: 'turn-started';
      readonly subtask: string;
      readonly worker: number;
      readonly instruction: string;
    }
  | {
      readonly kind: 'turn-finished';
      readonly subtask: string;
      readonly worker: number;
      readonly succeeded: boolean;
      readonly summary: string;
    }
  | { readonly kind: 'skipped'; readonly subtask: string }
  /** A turn changed nothing while an edit of it failed: it runs once more with `refusal` quoted. */
  | { readonly kind: 'refused'; readonly subtask: string; readonly worker: number; readonly refusal: string }
  /** What a running turn's agent just said (its structured `message` events), cut to one line. */
  | { readonly kind: 'activity'; readonly subtask: string; readonly worker: number; readonly text: string }
  /** A turn went silent, was retried, used up its attempts, was answered (see turn-deliveries.ts). */
  | DeliveryProgress
  | { readonly kind: 'conflict'; readonly subtask: string; readonly files: readonly string[] }
  | { readonly kind: 'tests'; readonly passed: boolean; readonly exitCode: number }
  | { readonly kind: 'usage'; readonly usage: RunRecord['usage'] };

/** Collaborators of {@link executeRun}; the hub assembles them (src/hub/start-run.ts). */
export interface RunEngineDeps {
  readonly git: Git;
  readonly ledger: RunLedger;
  readonly worktrees: RunWorktrees;
  readonly bus: Bus;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Builds the three-phase team over the manager turn and dispatcher the engine gives it. */
  readonly team: (wiring: {
    readonly manager: AgentTurn;
    readonly dispatcher: SubtaskDispatcher<SubtaskRecord>;
  }) => ThreePhaseTeam<SubtaskRecord>;
  /** The manager's runner (decomposition). */
  readonly managerRunner: AgentRunner;
  /** Worker n's runner. */
  readonly workerRunner: (n: number) => AgentRunner;
  /** The runner of conflict-resolution turns. */
  readonly resolverRunner: AgentRunner;
  /** The environment the test command runs with. */
  readonly testEnv: Readonly<Record<string, string>>;
  /**
   * Masks the test command's output before it is recorded or handed to a fix turn (it runs with the
   * whole environment, secrets included); the runners mask their own output. Default: nothing masked.
   */
  readonly secretMask?: SecretMask;
  readonly onProgress: (progress: RunProgress) => void;
  readonly signal: AbortSignal;
  /** Timeout of one worker turn; default 20 min. */
  readonly turnTimeoutMs?: number;
  /**
   * A turn that emits no event (output line, message) for this long is stalled: reported, stopped
   * and given back to the bus like a crash (the bus's retry policy runs it again). Default 5 min.
   */
  readonly stallMs?: number;
  /**
   * Asks the person at the terminal what to do with a turn the bus gave up on (retry, skip, abort);
   * without it, the answer comes from the run's mailbox (the dashboard, `musubi runs answer`).
   */
  readonly askHuman?: AskHuman;
  /** Merge the run branch into the user's current branch at the end (only when their tree is clean). */
  readonly apply?: boolean;
}

/** How a run ended, and what `--apply` did. */
export interface RunResult {
  readonly record: RunRecord;
  /** With `apply`: merged, or why not. */
  readonly applied?: { readonly ok: true } | { readonly ok: false; readonly reason: string };
}

const TURN_TIMEOUT_MS = 20 * 60_000;
const STALL_MS = 5 * 60_000;
const MAX_FIX_ROUNDS = 1;
const SUMMARY_CHARS = 200;

class BudgetStop extends Error {}

/** How {@link executeRun}'s `turn` runs one turn, beyond its runner, prompt and cwd. */
interface TurnOptions {
  /** The turn's stable id (see TurnAsk.id) and what it is called in progress lines. */
  readonly id: string;
  readonly title: string;
  readonly member: string;
  readonly timeoutMs?: number;
  /** What the turn's agent is doing, in a line (its messages and tool calls). */
  readonly onMessage?: (text: string) => void;
  /** Every event of the turn, as the runner delivers it. */
  readonly onEvent?: (event: AgentRunEvent) => void;
  readonly label?: TurnLabel;
}

/** A stored plan as the team takes it (optional fields left out rather than undefined). */
function planOf(stored: NonNullable<RunRecord['plan']>): JobPlan {
  return {
    phases: stored.phases,
    ...(stored.strategy !== undefined && { strategy: stored.strategy }),
    ...(stored.fallbackReason !== undefined && { fallbackReason: stored.fallbackReason }),
  };
}

function summaryOf(output: string): string {
  const text = output.trim().replace(/\s+/g, ' ');
  return text.length <= SUMMARY_CHARS ? text : `${text.slice(0, SUMMARY_CHARS - 1)}…`;
}

async function hasConflictMarkers(dir: string, files: readonly string[]): Promise<string[]> {
  const left: string[] = [];
  for (const file of files) {
    const text = await readFile(join(dir, file), 'utf8').catch(() => '');
    if (/^(<{7}|>{7})( |$)/m.test(text)) left.push(file);
  }
  return left;
}

/**
 * Runs (or resumes) one `musubi run` to its end. Every step is written to the run record before the
 * next starts — the plan, each subtask's start and its commit, each merge, the test verdict — so a
 * process killed at any point resumes from the last finished step: no finished subtask runs again
 * and no commit is merged twice (git itself also refuses a second merge of the same commit).
 * The user's branch, index and working tree are never touched; only `apply` merges the result into
 * the current branch, and only when that tree is clean. Rejects only on git or store failures.
 *
 * Honest outcomes: a worker turn that exits 0 without changing its worktree while one of its edits
 * failed or was refused (see {@link FailedEdits}) did not do its task. It runs once more in the same
 * worktree with those edits quoted in its prompt ({@link retryPrompt}); if that changes nothing either,
 * the subtask fails with the refused edit as its `refusal` and summary. A turn with no failed edit that
 * changes nothing (a review that only replies, a command that fails) is left as it ends. The run then
 * ends `no-change` when no subtask of any phase committed anything (precisely: {@link endingOf}).
 */
export async function executeRun(deps: RunEngineDeps, initial: RunRecord): Promise<RunResult> {
  const { git, ledger, worktrees, clock, signal } = deps;
  let record: RunRecord = { ...initial, status: 'running', reason: null, finishedAt: null };
  // Parallel workers change the record at once: each change applies at once (in JS order), and the
  // writes go out one after another, each with the newest record.
  const writes = new SerialQueue();
  const save = async (change: Partial<RunRecord>): Promise<void> => {
    record = { ...record, ...change, updatedAt: clock.now() };
    await writes.run(() => ledger.save(record));
  };
  const publish = (type: `run.${string}`, data: Record<string, unknown>): void =>
    void deps.bus.publish({ type, data: { runId: record.id, ...data } }).catch(() => undefined);
  const report = (progress: RunProgress): void => {
    deps.onProgress(progress);
    publish(`run.${progress.kind}`, { ...progress });
  };
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal.addEventListener('abort', onAbort, { once: true });
  let stopReason: string | undefined;

  const overBudget = (): string | undefined => {
    const { usd, tokens } = record.budget;
    const spent = record.usage;
    if (usd !== undefined && spent.costUsd >= usd)
      return `the budget of $${usd} is spent ($${spent.costUsd.toFixed(4)})`;
    const used = spent.inputTokens + spent.outputTokens;
    if (tokens !== undefined && used >= tokens) return `the budget of ${tokens} tokens is spent (${used})`;
    return undefined;
  };

  const integration = await worktrees.integration(record.branch, record.baseCommit);
  let phaseName = 'implement';

  // Every turn is a delivery on the bus: sent to its member's mailbox, consumed under a lease, retried
  // by the bus's policy, dead-lettered and escalated to the human after the last attempt.
  const done = new AbortController();
  const turnSignal = AbortSignal.any([stop.signal, done.signal]);
  // Each member's consumer, each asked turn and the answers listen to it: a few per member.
  setMaxListeners(16 + 4 * (record.workers + 2), turnSignal);
  const escalations = new RunEscalations({
    bus: deps.bus,
    runId: record.id,
    logger: deps.logger,
    ...(deps.askHuman !== undefined && { askHuman: deps.askHuman }),
    signal: turnSignal,
  });
  const deliveries = await TurnDeliveries.open({
    bus: deps.bus,
    clock,
    logger: deps.logger,
    runId: record.id,
    members: [
      memberName(record.id, 'manager'),
      memberName(record.id, 'resolver'),
      ...Array.from({ length: record.workers }, (_, i) => memberName(record.id, 'worker', i + 1)),
    ],
    stallMs: deps.stallMs ?? STALL_MS,
    escalations,
    onProgress: report,
    signal: turnSignal,
  });

  /** Stops the run at the human's word (`abort` to a turn the bus gave up on). */
  const abortBy = (end: Extract<TurnEnd, { kind: 'given-up' }>, title: string): void => {
    stopReason ??= `aborted by ${end.by}: ${title} gave up after ${end.attempts} attempt(s) (${end.reason})`;
    stop.abort();
  };

  /** One agent turn as a delivery; counts turns, retries and usage of every attempt. */
  const turn = async (
    runner: AgentRunner,
    prompt: string,
    cwd: string,
    options: TurnOptions,
  ): Promise<TurnEnd> => {
    const { onMessage } = options;
    const label = options.label ?? {
      agent: options.member,
      run: record.id,
      team: record.team,
      phase: 'plan',
    };
    return deliveries.ask({
      id: options.id,
      member: options.member,
      title: options.title,
      runner,
      prompt,
      cwd,
      timeoutMs: options.timeoutMs ?? deps.turnTimeoutMs ?? TURN_TIMEOUT_MS,
      label,
      onEvent: (event: AgentRunEvent): void => {
        options.onEvent?.(event);
        if (event.type === 'message' && onMessage !== undefined) onMessage(event.text);
        // A tool call says best what a worker is doing: `command: npm test`, `edit: src/retry.ts`.
        if (event.type === 'tool' && onMessage !== undefined)
          onMessage(`${event.kind}: ${event.summary || event.name}`);
      },
      onAttempt: async (outcome: TurnOutcome, attempt: number) => {
        if (outcome.kind === 'canceled') return;
        const usage = outcome.kind === 'finished' ? outcome.usage : undefined;
        await save({
          turns: record.turns + 1,
          retries: record.retries + (attempt > 1 ? 1 : 0),
          usage: addUsage(record.usage, usage),
        });
        if (usage !== undefined) report({ kind: 'usage', usage: record.usage });
      },
    });
  };

  const dispatcher: SubtaskDispatcher<SubtaskRecord> = {
    invalidSubtask: (worker) => ({
      id: 'invalid',
      phase: phaseName,
      worker,
      instruction: '',
      status: 'failed',
      branch: '',
      commit: null,
      isMerged: true,
      summary: 'the plan gave this subtask no instruction',
      attempts: 0,
      usage: ZERO_USAGE,
    }),
    dispatch: async ({ worker, subtask }) => {
      const done = record.subtasks[subtask.id];
      if (done !== undefined && done.status !== 'running') {
        report({ kind: 'skipped', subtask: subtask.id });
        return { entry: done, isConnectionFailure: false };
      }
      const budget = overBudget();
      if (budget !== undefined) {
        stopReason ??= budget;
        stop.abort();
        throw new BudgetStop(budget);
      }
      const branch = `musubi/${subtask.id}`;
      const from = (await git.commitOf(integration, 'HEAD')) ?? record.baseCommit;
      const entry: SubtaskRecord = {
        id: subtask.id,
        phase: phaseName,
        worker,
        instruction: subtask.instruction,
        status: 'running',
        branch,
        commit: null,
        isMerged: false,
        summary: '',
        attempts: (done?.attempts ?? 0) + 1,
        usage: done?.usage ?? ZERO_USAGE,
      };
      await save({ subtasks: { ...record.subtasks, [subtask.id]: entry } });
      report({ kind: 'turn-started', subtask: subtask.id, worker, instruction: subtask.instruction });
      const dir = await worktrees.fresh(subtask.id, branch, from);
      const before = record.usage;
      const runner = deps.workerRunner(worker);
      const message = `musubi ${record.id}: ${subtask.id}\n\n${subtask.instruction}`;
      const member = memberName(record.id, 'worker', worker);
      let attempts = entry.attempts;
      /** A worker turn; what the bus gave up on and the human skipped ends as a failed turn. */
      const workerTurn = async (id: string, prompt: string, edits: FailedEdits): Promise<FinishedTurn> => {
        const end = await turn(runner, prompt, dir, {
          id,
          title: subtask.id,
          member,
          onMessage: (text) => {
            const line = summaryOf(text);
            if (line !== '') report({ kind: 'activity', subtask: subtask.id, worker, text: line });
          },
          onEvent: edits.observe,
          label: { agent: member, run: record.id, team: record.team, phase: phaseName, subtask: subtask.id },
        });
        if (end.kind === 'canceled') throw new BudgetStop(stopReason ?? 'interrupted');
        attempts += Math.max(0, end.attempts - 1);
        if (end.kind === 'done') return end.outcome;
        if (end.choice === 'abort') {
          abortBy(end, subtask.id);
          throw new BudgetStop(stopReason ?? 'aborted');
        }
        const output = `skipped by ${end.by} after ${end.attempts} attempt(s): ${end.reason}`;
        return { kind: 'finished', output, exitCode: 1, hasFailed: true };
      };
      const first = new FailedEdits();
      let outcome = await workerTurn(
        subtask.id,
        workerPrompt(record.goal, phaseName, subtask.instruction),
        first,
      );
      let committed = await git.commitAll(dir, message);
      let refusal: string | undefined;
      // A clean turn that changed nothing while its edits failed did not do its task: once more with
      // what the tools said, then the subtask fails naming it (a turn with no failed edit, a review
      // that only replies, changes nothing legitimately).
      if (!committed && isCleanFinish(outcome) && first.quotes.length > 0) {
        report({ kind: 'refused', subtask: subtask.id, worker, refusal: first.quotes[0] ?? '' });
        attempts += 1;
        await save({ retries: record.retries + 1 });
        const again = new FailedEdits();
        outcome = await workerTurn(
          `${subtask.id}.retry`,
          retryPrompt(record.goal, phaseName, subtask.instruction, first.quotes),
          again,
        );
        committed = await git.commitAll(dir, message);
        if (!committed && isCleanFinish(outcome)) refusal = again.quotes[0] ?? first.quotes[0];
      }
      const { output } = outcome;
      const succeeded = isCleanFinish(outcome) && refusal === undefined;
      const finished: SubtaskRecord = {
        ...entry,
        status: succeeded ? 'succeeded' : 'failed',
        commit: committed ? ((await git.commitOf(dir, 'HEAD')) ?? null) : null,
        isMerged: !committed,
        summary:
          refusal === undefined
            ? summaryOf(output)
            : summaryOf(`changed nothing; an edit failed: ${refusal}`),
        ...(refusal !== undefined && { refusal }),
        attempts,
        usage: addUsage(entry.usage, {
          inputTokens: record.usage.inputTokens - before.inputTokens,
          outputTokens: record.usage.outputTokens - before.outputTokens,
          costUsd: record.usage.costUsd - before.costUsd,
        }),
      };
      await save({ subtasks: { ...record.subtasks, [subtask.id]: finished } });
      if (!record.keepWorktrees) await worktrees.remove(subtask.id);
      report({ kind: 'turn-finished', subtask: subtask.id, worker, succeeded, summary: finished.summary });
      return { entry: finished, isConnectionFailure: false };
    },
  };

  /** Merges the phase's commits into the run branch in subtask order; false when a conflict stayed. */
  const integrate = async (entries: readonly SubtaskRecord[]): Promise<boolean> => {
    for (const entry of entries) {
      const current = record.subtasks[entry.id];
      if (current === undefined || current.isMerged || current.commit === null) continue;
      const merged = await git.merge(integration, current.commit, `musubi ${record.id}: merge ${entry.id}`);
      if (merged.kind === 'conflict') {
        report({ kind: 'conflict', subtask: entry.id, files: merged.files });
        const conflict = { subtask: entry.id, files: merged.files, isResolved: false };
        await save({ conflicts: [...record.conflicts, conflict] });
        const resolver = memberName(record.id, 'resolver');
        const end = await turn(
          deps.resolverRunner,
          resolverPrompt(record.goal, entry.id, merged.files),
          integration,
          {
            id: `${entry.id}.resolve`,
            title: `resolving ${entry.id}`,
            member: resolver,
            label: {
              agent: resolver,
              run: record.id,
              team: record.team,
              phase: 'resolve',
              subtask: entry.id,
            },
          },
        );
        if (end.kind === 'given-up' && end.choice === 'abort') abortBy(end, `resolving ${entry.id}`);
        if (stop.signal.aborted) {
          await git.run(integration, ['merge', '--abort']);
          throw new BudgetStop(stopReason ?? 'interrupted');
        }
        const left = await hasConflictMarkers(integration, merged.files);
        if (left.length > 0) {
          await git.run(integration, ['merge', '--abort']);
          await save({
            reason: `merging ${entry.id} conflicted in ${merged.files.join(', ')}; the resolver left conflict markers in ${left.join(', ') || 'them'}`,
          });
          return false;
        }
        await git.concludeMerge(integration);
        await save({ conflicts: [...record.conflicts.slice(0, -1), { ...conflict, isResolved: true }] });
      }
      await save({ subtasks: { ...record.subtasks, [entry.id]: { ...current, isMerged: true } } });
    }
    return true;
  };

  /** Stops the members' consumers and the answers; resolves once their turns have settled. */
  const closeTurns = async (): Promise<void> => {
    done.abort();
    await Promise.all([deliveries.closed(), escalations.closed()]);
  };

  const finish = async (status: RunRecord['status'], reason: string | null): Promise<RunResult> => {
    signal.removeEventListener('abort', onAbort);
    await closeTurns();
    const head = (await git.commitOf(integration, 'HEAD')) ?? record.baseCommit;
    await save({ status, reason, finishedAt: clock.now(), headCommit: head });
    if (!record.keepWorktrees && status !== 'stopped') {
      await worktrees.removeAll(Object.keys(record.subtasks));
      // One call for every worker branch (git deletes those there and names the others).
      const branches = Object.values(record.subtasks).flatMap((t) => (t.branch === '' ? [] : [t.branch]));
      if (branches.length > 0) await git.run(record.repo, ['branch', '-D', '-q', ...branches]);
    }
    publish('run.finished', { status, reason });
    if (deps.apply !== true || status !== 'succeeded') return { record };
    if (!(await git.isClean(record.repo))) {
      return {
        record,
        applied: {
          ok: false,
          reason: 'your working tree has changes; commit or stash them, then merge the branch yourself',
        },
      };
    }
    const merged = await git.merge(record.repo, record.branch, `musubi ${record.id}: apply`);
    if (merged.kind === 'conflict') {
      await git.run(record.repo, ['merge', '--abort']);
      return {
        record,
        applied: { ok: false, reason: `merging into your branch conflicts in ${merged.files.join(', ')}` },
      };
    }
    return { record, applied: { ok: true } };
  };

  const job = { id: record.id, instruction: record.goal, projectDir: integration };
  let planTurns = 0;
  /** The manager's turn for the team: skipped by the human, it fails (the team falls back to one phase). */
  const manager: AgentTurn = async (request) => {
    planTurns += 1;
    const end = await turn(deps.managerRunner, request.prompt, request.cwd, {
      id: `${record.id}.plan${planTurns === 1 ? '' : `-${planTurns}`}`,
      title: 'the plan',
      member: memberName(record.id, 'manager'),
      timeoutMs: request.timeoutMs,
    });
    if (end.kind === 'canceled') return end;
    if (end.kind === 'done') return end.outcome;
    if (end.choice === 'abort') {
      abortBy(end, 'the plan');
      return { kind: 'canceled' };
    }
    const output = `skipped by ${end.by} after ${end.attempts} attempt(s): ${end.reason}`;
    return { kind: 'finished', output, exitCode: 1, hasFailed: true };
  };
  const team = deps.team({ manager, dispatcher });
  try {
    let plan: JobPlan | null = record.plan === null ? null : planOf(record.plan);
    if (plan === null) {
      const planned = await team.plan(job, stop.signal);
      if (planned === 'canceled')
        return await finish('stopped', stopReason ?? 'interrupted before the plan was made');
      plan = planned;
      await save({
        plan: {
          phases: plan.phases.map((p) => ({ name: p.name, subtasks: [...p.subtasks] })),
          ...(plan.strategy !== undefined && { strategy: plan.strategy }),
          ...(plan.fallbackReason !== undefined && { fallbackReason: plan.fallbackReason }),
        },
      });
    }
    report({
      kind: 'planned',
      phases: plan.phases.map((p) => ({ name: p.name, subtasks: p.subtasks.length })),
    });
    for (let index = record.phasesDone; index < plan.phases.length; index++) {
      phaseName = plan.phases[index]?.name ?? `phase${index}`;
      report({ kind: 'phase', name: phaseName, index, count: plan.phases.length });
      const result = await team.runPhase(job, plan, index, stop.signal);
      if (result === 'canceled') return await finish('stopped', stopReason ?? 'interrupted');
      if (!(await integrate(result.entries))) return await finish('failed', record.reason);
      await save({ phasesDone: index + 1 });
    }
    if (record.test !== null) {
      for (;;) {
        const raw = await runTestGate({
          command: record.test,
          cwd: integration,
          env: deps.testEnv,
          signal: stop.signal,
        });
        const verdict = deps.secretMask?.maskDeep(raw) ?? raw;
        await save({ tests: verdict });
        report({ kind: 'tests', passed: verdict.passed, exitCode: verdict.exitCode });
        if (verdict.passed || record.fixRounds >= MAX_FIX_ROUNDS || stop.signal.aborted) break;
        await save({ fixRounds: record.fixRounds + 1 });
        phaseName = `fix${record.fixRounds}`;
        const fixPlan: JobPlan = {
          phases: [
            {
              name: phaseName,
              subtasks: [{ instruction: fixPrompt(verdict.command, verdict.exitCode, verdict.outputTail) }],
            },
          ],
        };
        report({ kind: 'phase', name: phaseName, index: 0, count: 1 });
        const fixed = await team.runPhase(job, fixPlan, 0, stop.signal);
        if (fixed === 'canceled') return await finish('stopped', stopReason ?? 'interrupted');
        if (!(await integrate(fixed.entries))) return await finish('failed', record.reason);
      }
      if (stop.signal.aborted) return await finish('stopped', stopReason ?? 'interrupted');
    }
    const ending = endingOf(record);
    return await finish(ending.status, ending.reason);
  } catch (err) {
    if (err instanceof BudgetStop) return await finish('stopped', stopReason ?? err.message);
    throw err;
  } finally {
    await closeTurns();
  }
}
