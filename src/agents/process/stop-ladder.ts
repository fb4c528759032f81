import { setTimeout as delay } from 'node:timers/promises';
import type { Writable } from 'node:stream';
import { descendantGroups, isGroupAlive, signalGroup } from './process-group.js';

/** Default grace period between SIGTERM and SIGKILL. */
export const DEFAULT_GRACE_MS = 5000;

/** How long to wait for the kernel after SIGKILL before giving up on a group. */
const AFTER_KILL_WAIT_MS = 2000;

/** Options of {@link stopProcessGroup}. */
export interface StopLadderOptions {
  readonly graceMs: number;
  /** The child's stdin, closed first so a CLI waiting for input can finish on its own. */
  readonly stdin?: Writable | null;
}

/** How a stop ended: the group was already gone, left after SIGTERM, or needed SIGKILL. */
export type StopOutcome = 'gone' | 'terminated' | 'killed';

/** Polls `isDone` with a short, growing interval until it holds or `timeoutMs` passes. */
export async function waitUntil(isDone: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let intervalMs = 5;
  while (!isDone()) {
    if (Date.now() >= deadline) return false;
    await delay(Math.min(intervalMs, Math.max(1, deadline - Date.now())), undefined, { ref: false });
    intervalMs = Math.min(intervalMs * 2, 50);
  }
  return true;
}

function signalAll(groups: Iterable<number>, signal: NodeJS.Signals): void {
  for (const group of groups) signalGroup(group, signal);
}

/**
 * The stop ladder for one agent process group and the groups its processes started with setsid
 * ({@link descendantGroups}): close stdin, SIGTERM to every group, wait up to `graceMs` for every member
 * to go, then SIGKILL what is left. Resolves once all are gone (or 2 s after SIGKILL at the latest). Safe
 * to call on a group that already exited.
 */
export async function stopProcessGroup(pgid: number, options: StopLadderOptions): Promise<StopOutcome> {
  options.stdin?.destroy();
  const groups = new Set([pgid, ...descendantGroups(pgid)]);
  const isAllGone = (): boolean => [...groups].every((g) => !isGroupAlive(g));
  if (isAllGone()) return 'gone';
  signalAll(groups, 'SIGTERM');
  if (await waitUntil(isAllGone, options.graceMs)) return 'terminated';
  // Groups started during the grace period by members still alive go down too.
  for (const group of descendantGroups(pgid)) groups.add(group);
  signalAll(groups, 'SIGKILL');
  await waitUntil(isAllGone, AFTER_KILL_WAIT_MS);
  return 'killed';
}
