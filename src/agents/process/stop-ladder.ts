import { setTimeout as delay } from 'node:timers/promises';
import type { Writable } from 'node:stream';
import { isGroupAlive, signalGroup } from './process-group.js';

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

/**
 * The stop ladder for one agent process group: close stdin, SIGTERM to the group, wait up to
 * `graceMs` for every member to go, then SIGKILL the group. Resolves once the group is gone (or 2 s
 * after SIGKILL at the latest). Safe to call on a group that already exited.
 */
export async function stopProcessGroup(pgid: number, options: StopLadderOptions): Promise<StopOutcome> {
  options.stdin?.destroy();
  if (!isGroupAlive(pgid)) return 'gone';
  if (!signalGroup(pgid, 'SIGTERM')) return 'gone';
  if (await waitUntil(() => !isGroupAlive(pgid), options.graceMs)) return 'terminated';
  signalGroup(pgid, 'SIGKILL');
  await waitUntil(() => !isGroupAlive(pgid), AFTER_KILL_WAIT_MS);
  return 'killed';
}
