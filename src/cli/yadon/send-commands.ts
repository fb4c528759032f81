import { lstat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createSystemClock } from '../../core/clock.js';
import { generateTaskId } from '../../gateways/yadon/task-id.js';
import { STATUS_PROBE_MS } from '../../gateways/yadon/worker-probe.js';
import { exchangeWithAgent } from '../../gateways/yadon/yadon-client.js';
import { agentSocketPath, MANAGER_NAME, resolveSocketDir } from '../../gateways/yadon/yadon-paths.js';
import type { CliContext } from '../cli-context.js';
import { asObject, envelopeLine } from './yadon-output.js';

/** How long `_send` waits for the manager's result (spec yadon.md 2.5). */
const SEND_WAIT_MS = 600_000;
const TIMEOUT_MESSAGE = 'yadoranからの応答がありません（タイムアウト）';

async function managerSocket(ctx: CliContext): Promise<{ path: string; exists: boolean }> {
  const path = agentSocketPath(resolveSocketDir(ctx.env), MANAGER_NAME);
  return { path, exists: (await lstat(path).catch(() => null)) !== null };
}

/**
 * `yadon _send <instruction> [--project-dir DIR]`: sends a task with a fresh id to the manager and
 * prints one envelope line with `task_id`; success iff the result's status is `success`. Always exit 0.
 */
export async function sendCommand(
  ctx: CliContext,
  instruction: string,
  options: { readonly projectDir?: string },
): Promise<void> {
  const clock = createSystemClock();
  const taskId = generateTaskId(clock.now());
  const manager = await managerSocket(ctx);
  if (!manager.exists) {
    const message = `yadoranソケットが見つかりません (${manager.path})`;
    ctx.stdout.write(envelopeLine({ success: false, message, data: null, taskId }));
    return;
  }
  const payload = {
    instruction,
    ...(options.projectDir !== undefined && { project_dir: resolve(options.projectDir) }),
  };
  const reply = await exchangeWithAgent(
    manager.path,
    { type: 'task', id: taskId, payload },
    { timeoutMs: SEND_WAIT_MS, clock },
  );
  if (!reply.ok) {
    const message = reply.stage === 'timeout' ? TIMEOUT_MESSAGE : reply.text;
    ctx.stdout.write(envelopeLine({ success: false, message, data: null, taskId }));
    return;
  }
  const success = asObject(reply.value)?.['status'] === 'success';
  ctx.stdout.write(envelopeLine({ success, message: '', data: reply.value, taskId }));
}

/** `yadon _result <task_id>`: fetches a stored result (or the task's state) from the manager. Exit 0. */
export async function resultCommand(ctx: CliContext, taskId: string): Promise<void> {
  const manager = await managerSocket(ctx);
  if (!manager.exists) {
    const message = `yadoranソケットが見つかりません (${manager.path})`;
    ctx.stdout.write(envelopeLine({ success: false, message, data: null }));
    return;
  }
  const reply = await exchangeWithAgent(
    manager.path,
    { type: 'get_result', id: taskId },
    { timeoutMs: STATUS_PROBE_MS, clock: createSystemClock() },
  );
  if (!reply.ok) {
    const message = reply.stage === 'timeout' ? TIMEOUT_MESSAGE : reply.text;
    ctx.stdout.write(envelopeLine({ success: false, message, data: null }));
    return;
  }
  const doc = asObject(reply.value);
  const type = doc?.['type'];
  if (type === 'result') {
    ctx.stdout.write(
      envelopeLine({ success: doc?.['status'] === 'success', message: '', data: reply.value }),
    );
  } else if (type === 'task_state') {
    const message = `タスクは実行中です (${String(doc?.['state'])})`;
    ctx.stdout.write(envelopeLine({ success: false, message, data: reply.value }));
  } else {
    const message = typeof doc?.['message'] === 'string' ? doc['message'] : 'unexpected reply';
    ctx.stdout.write(envelopeLine({ success: false, message, data: reply.value }));
  }
}
