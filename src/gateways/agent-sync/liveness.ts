import type { AgentRecord } from '../../teams/rounds/rounds-state.js';

/**
 * When each joined agent was last seen (join, heartbeat, peek, start or end of a listen). Kept in
 * memory: after a restart it falls back to the persisted join and heartbeat times.
 */
export class Liveness {
  readonly #lastSeenMs = new Map<string, number>();

  /** Records activity of `name` at `nowMs` (callers pass joined names only, bounding the map). */
  touch(name: string, nowMs: number): void {
    this.#lastSeenMs.set(name, nowMs);
  }

  /** The latest of join, heartbeat and recorded activity. */
  lastSeenMs(agent: AgentRecord): number {
    return Math.max(agent.joinedAtMs, agent.lastHeartbeatMs ?? 0, this.#lastSeenMs.get(agent.name) ?? 0);
  }

  /** Forgets everything (fresh start). */
  clear(): void {
    this.#lastSeenMs.clear();
  }
}
