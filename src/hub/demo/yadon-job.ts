import { z } from 'zod';
import type { Clock } from '../../core/clock.js';
import { MusubiError } from '../../core/errors.js';
import { generateTaskId } from '../../gateways/yadon/task-id.js';
import { exchangeWithAgent } from '../../gateways/yadon/yadon-client.js';
import { agentSocketPath, MANAGER_NAME } from '../../gateways/yadon/yadon-paths.js';

/** How the yadon team's job ended, from the manager's reply. */
export interface YadonJobResult {
  readonly taskId: string;
  /** `success`, `partial_error`, `error`… as the manager reported it. */
  readonly status: string;
  readonly summary: string;
  readonly output: string;
}

const replySchema = z.union([
  z.object({
    type: z.literal('result'),
    status: z.string(),
    payload: z.object({ output: z.string(), summary: z.string() }),
  }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);

/**
 * Gives the goal to the yadon manager the way `yadon _send` does: a `task` request on yadoran's agent
 * socket in `socketDir`, the reply read when the three phases are over. Rejects with
 * GATEWAY_UNAVAILABLE when the socket cannot be reached or answers nothing within `timeoutMs` (or
 * `signal` aborts), GATEWAY_FRAME_INVALID for a reply that is neither a `result` nor an `error`.
 */
export async function submitGoal(options: {
  readonly socketDir: string;
  readonly instruction: string;
  readonly projectDir: string;
  readonly clock: Clock;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}): Promise<YadonJobResult> {
  const taskId = generateTaskId(options.clock.now());
  const request = {
    type: 'task',
    id: taskId,
    payload: { instruction: options.instruction, project_dir: options.projectDir },
  };
  const reply = await exchangeWithAgent(agentSocketPath(options.socketDir, MANAGER_NAME), request, {
    timeoutMs: options.timeoutMs,
    clock: options.clock,
    ...(options.signal !== undefined && { signal: options.signal }),
  });
  options.signal?.throwIfAborted();
  if (!reply.ok) {
    throw new MusubiError(
      'GATEWAY_UNAVAILABLE',
      `yadoran did not answer the goal (${reply.stage}: ${reply.text})`,
    );
  }
  const doc = replySchema.safeParse(reply.value);
  if (!doc.success)
    throw new MusubiError('GATEWAY_FRAME_INVALID', 'yadoran answered with an unknown document');
  if (doc.data.type === 'error') {
    return { taskId, status: 'error', summary: doc.data.message, output: doc.data.message };
  }
  return {
    taskId,
    status: doc.data.status,
    summary: doc.data.payload.summary,
    output: doc.data.payload.output,
  };
}
