import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { TASK_STATES, type TaskRecord } from '../../tasks/task-record.js';
import { limitField } from './input-fields.js';
import type { McpToolContext } from './mcp-tool-context.js';
import { toolOutcome } from './tool-outcome.js';

/** Tasks listed when `tasks` names no limit. */
export const DEFAULT_TASKS_LIMIT = 20;
/** Most tasks one call lists. */
export const MAX_TASKS_LIMIT = 200;

const DESCRIPTION = `List the tracked background tasks of the team (the task registry shared by every team and gateway), newest last.
When to call: to see what work is queued, running or finished, who runs it and how far it got - for example before starting work someone may already be doing.
Returns { tasks, total }: total is how many matched; tasks holds the newest "limit" of them, each with id, owner, kind, state (queued | running | completed | failed | cancelled | blocked), and when set title, description, channel, agent, progress, error, createdAt, updatedAt, endedAt.
Errors: USAGE_INVALID (an unknown state or a limit out of range).`;

function nameFilter(name: string): z.ZodOptional<z.ZodString> {
  return z
    .string({ error: `USAGE_INVALID: ${name} must be a string of at most 128 characters` })
    .max(128)
    .optional();
}

function taskView(t: TaskRecord): Record<string, unknown> {
  const iso = (ms: number | undefined): string | undefined =>
    ms === undefined ? undefined : new Date(ms).toISOString();
  const view = {
    id: t.id,
    owner: t.owner,
    kind: t.kind,
    state: t.state,
    title: t.title,
    description: t.description,
    channel: t.channel,
    agent: t.agent,
    progress: t.progress,
    error: t.error,
    createdAt: iso(t.createdAt),
    updatedAt: iso(t.updatedAt),
    endedAt: iso(t.endedAt),
  };
  return Object.fromEntries(Object.entries(view).filter(([, v]) => v !== undefined));
}

/** Registers `tasks`: list the task registry, optionally by state, owner or agent. */
export function registerTasksTool(server: McpServer, ctx: McpToolContext): void {
  server.registerTool(
    'tasks',
    {
      title: 'List tasks',
      description: DESCRIPTION,
      inputSchema: {
        states: z
          .array(
            z.enum(TASK_STATES, { error: `USAGE_INVALID: a state is one of ${TASK_STATES.join(', ')}` }),
            {
              error: 'USAGE_INVALID: states must be a list of task states',
            },
          )
          .optional()
          .describe('Only tasks in these states, e.g. ["queued", "running"]; default: all.'),
        owner: nameFilter('owner').describe('Only tasks of this owner (team or gateway), e.g. "neko".'),
        agent: nameFilter('agent').describe('Only tasks run by this agent.'),
        limit: limitField(MAX_TASKS_LIMIT)
          .optional()
          .describe(`Most tasks to list (default ${DEFAULT_TASKS_LIMIT}, at most ${MAX_TASKS_LIMIT}).`),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (args) =>
      toolOutcome('tasks', ctx.logger, async () => {
        const rows = await ctx.tasks.list({
          ...(args.owner === undefined ? {} : { owner: args.owner }),
          ...(args.states === undefined ? {} : { states: args.states }),
        });
        const matching = args.agent === undefined ? rows : rows.filter((t) => t.agent === args.agent);
        const limit = args.limit ?? DEFAULT_TASKS_LIMIT;
        return { total: matching.length, tasks: matching.slice(-limit).map(taskView) };
      }),
  );
}
