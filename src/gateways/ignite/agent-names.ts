/**
 * IGNITE's agent names (spec/ignite.md 2.1, 4.4, 6.2): the fixed organisation, the `ignitian_N` workers,
 * which queue folders are scanned, and each agent's index (the number in its state file names).
 */

/** The leader and the five sub-leaders, in index order 0..5. */
export const FIXED_AGENTS = [
  'leader',
  'strategist',
  'architect',
  'evaluator',
  'coordinator',
  'innovator',
] as const;

const FIXED: readonly string[] = FIXED_AGENTS;
const WORKER = /^ignitian[-_]([0-9]+)$/;
/** Folders matching the glob `ignitian[_-]*` are scanned (even when their suffix is not a number). */
const WORKER_GLOB = /^ignitian[-_]/;

/** The recipients the send tool accepts, as its error text lists them. */
export const SEND_RECIPIENTS_TEXT = `${FIXED_AGENTS.join(' ')}, ignitian_N`;

/** True for the six fixed agents and `ignitian[-_]<digits>`: the send tool's recipient rule. */
export function isSendRecipient(name: string): boolean {
  return FIXED.includes(name) || WORKER.test(name);
}

/** True when a folder under `queue/` is an agent queue root the monitor scans. */
export function isQueueAgentDir(name: string): boolean {
  return FIXED.includes(name) || WORKER_GLOB.test(name);
}

/**
 * The agent index: leader 0 … innovator 5, `ignitian[-_]N` 5 + N; null for any other name (the
 * delivery then fails with `未知のエージェント: <name>`).
 */
export function agentIndex(name: string): number | null {
  const fixed = FIXED.indexOf(name);
  if (fixed !== -1) return fixed;
  const n = WORKER.exec(name)?.[1];
  if (n === undefined || n.length > 6) return null;
  return 5 + Number(n);
}

/** A message type the send tool accepts: no `/`, no NUL, no leading `.` (deviation 14). */
export function isSendableType(type: string): boolean {
  return !type.includes('/') && !type.includes('\0') && !type.startsWith('.');
}

/** `ignitian-N` normalised to `ignitian_N` (notify); other names unchanged. */
export function normaliseWorkerName(name: string): string {
  const n = WORKER.exec(name)?.[1];
  return n === undefined ? name : `ignitian_${n}`;
}
