import type { TurnOutcome } from '../agents/agent-turn.js';
import type { RunRecord } from './run-record.js';

/** A finished turn that exited 0. */
export function isCleanFinish(outcome: TurnOutcome): boolean {
  return outcome.kind === 'finished' && outcome.exitCode === 0;
}

/**
 * How a run that went through all its phases ends (stops and unresolved conflicts end it earlier):
 * - `failed` when the test gate failed;
 * - `no-change` when no subtask of any phase committed a change, and either the test gate passed or
 *   every failed subtask failed for a refused edit (`refusal`); a run whose subtasks crashed or exited
 *   non-zero without a change stays `failed`, with their ids;
 * - else `succeeded` when the test gate passed, `failed` when a subtask failed, else `succeeded`.
 */
export function endingOf(record: RunRecord): {
  readonly status: RunRecord['status'];
  readonly reason: string | null;
} {
  const subtasks = Object.values(record.subtasks);
  const { tests } = record;
  if (tests !== null && !tests.passed)
    return { status: 'failed', reason: `the test command failed (exit ${tests.exitCode})` };
  const failed = subtasks.filter((s) => s.status === 'failed');
  const refused = failed.filter((s) => s.refusal !== undefined);
  const isUnchanged = subtasks.every((s) => s.commit === null);
  if (isUnchanged && (tests !== null || refused.length === failed.length)) {
    const why = refused.map((s) => `${s.id}: ${s.refusal ?? ''}`).join('; ');
    return { status: 'no-change', reason: `no subtask changed a file${why === '' ? '' : ` (${why})`}` };
  }
  if (tests !== null || failed.length === 0) return { status: 'succeeded', reason: null };
  return {
    status: 'failed',
    reason: `${failed.length} subtask(s) failed: ${failed.map((s) => s.id).join(', ')}`,
  };
}
