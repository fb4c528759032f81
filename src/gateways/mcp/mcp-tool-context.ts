import type { AgentRecord } from '../../bus/agent-directory.js';
import type { Bus } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { TaskRecord } from '../../tasks/task-record.js';
import type { TaskFilter } from '../../tasks/task-registry.js';
import type { AgentPresence } from './agent-presence.js';

/** The bus operations the MCP tools use (the Bus satisfies it). */
export type McpBus = Pick<Bus, 'send' | 'broadcast' | 'receive' | 'ack' | 'peek' | 'count' | 'listMailboxes'>;

/** The agent directory as the tools read it (the AgentDirectory satisfies it). */
export interface McpAgentList {
  list(): Promise<readonly AgentRecord[]>;
}

/** The task registry as the `tasks` tool reads it (the TaskRegistry satisfies it). */
export interface McpTaskList {
  list(filter?: TaskFilter): Promise<readonly TaskRecord[]>;
}

/**
 * What every tool handler receives: the agent this server acts for (the sender of everything it sends
 * and the owner of the mailbox it receives from), its collaborators, and `signal`, aborted when the
 * server shuts down so waiting receives end.
 */
export interface McpToolContext {
  readonly agent: string;
  readonly bus: McpBus;
  readonly agents: McpAgentList;
  readonly tasks: McpTaskList;
  readonly presence: AgentPresence;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  /** Lease of a `receive` that names none. */
  readonly leaseMs: number;
}
