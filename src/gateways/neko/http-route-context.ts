import type { FastifyReply } from 'fastify';
import type { Clock } from '../../core/clock.js';
import type { TaskRegistry } from '../../tasks/task-registry.js';
import type { ExecutorTeam } from '../../teams/executor/executor-team.js';

// What the N.E.K.O. HTTP app (neko-http.ts) and its route files share, kept apart so that the route
// files need not import the app that registers them.

/** What the HTTP control API works on; the gateway provides it. */
export interface NekoApiContext {
  readonly instanceId: string;
  readonly executor: ExecutorTeam;
  readonly registry: TaskRegistry;
  readonly clock: Clock;
  /** Builds the state snapshot (runs the lazy clean-up, consumes the notification). */
  snapshot(): Promise<Record<string, unknown>>;
  /** Builds a snapshot and sends it as `agent_status_update`. */
  emitStatus(): Promise<void>;
  /** Re-reads channel and assessor configuration; resolves a message for the caller. */
  reloadConfig(): Promise<string>;
}

/** Sends `{"detail": text}` with `status` (the original's validation-error convention). */
export function sendDetail(reply: FastifyReply, status: number, text: string): FastifyReply {
  return reply.code(status).send({ detail: text });
}

/** True for a plain JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
