import type { FastifyInstance } from 'fastify';
import type { Bus } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { AgentSource, RunSource, TaskSource, TeamSource, TurnSource } from './http-ports.js';

/** What every route module receives: the collaborators of the gateway, nothing else. */
export interface RouteContext {
  readonly app: FastifyInstance;
  readonly bus: Bus;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly agents: AgentSource;
  /** Absent until the hub has a task registry: routes then answer with an empty, unavailable list. */
  readonly tasks: TaskSource | undefined;
  readonly teams: readonly TeamSource[];
  /** Absent when the hub records no turns: turn routes answer with empty lists. */
  readonly turns: TurnSource | undefined;
  /** Absent when the hub cannot run `musubi run`: runs routes say so. */
  readonly runs: RunSource | undefined;
  /** Sender name of messages typed into the dashboard. */
  readonly sayFrom: string;
}
