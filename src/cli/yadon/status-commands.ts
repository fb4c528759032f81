import { createSystemClock } from '../../core/clock.js';
import { pyStr } from '../../core/python/repr.js';
import { STATUS_PROBE_MS } from '../../gateways/yadon/worker-probe.js';
import { exchangeWithAgent } from '../../gateways/yadon/yadon-client.js';
import {
  agentSocketPath,
  MANAGER_NAME,
  resolveSocketDir,
  resolveWorkerCount,
  workerNames,
} from '../../gateways/yadon/yadon-paths.js';
import type { CliContext } from '../cli-context.js';
import { asObject, envelopeLine, redLine } from './yadon-output.js';

function isFilled(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '' && value !== false && value !== 0;
}

/** The report lines after ` OK` (spec yadon.md 6, `status`). */
function report(reply: Record<string, unknown>): string {
  const state = Object.hasOwn(reply, 'state') ? pyStr(reply['state']) : 'unknown';
  const lines = ['', 'ヤドラン:', `  状態: ${state}`];
  if (isFilled(reply['current_task'])) lines.push(`  現在のタスク: ${pyStr(reply['current_task'])}`);
  const workers = asObject(reply['workers']);
  if (workers !== undefined && Object.keys(workers).length > 0) {
    lines.push('', 'ヤドン:');
    for (const name of Object.keys(workers).sort()) lines.push(`  ${name}: ${pyStr(workers[name])}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `yadon status [agent_name]`: asks the manager (or the named agent) for its status and prints the
 * report; exit 0, or 1 with the red タイムアウト / エラー line.
 */
export async function statusCommand(ctx: CliContext, agentName: string | undefined): Promise<number> {
  const dir = resolveSocketDir(ctx.env);
  const names = agentName ?? [MANAGER_NAME, ...workerNames(resolveWorkerCount(ctx.env))].join(', ');
  const path = agentSocketPath(dir, agentName ?? MANAGER_NAME);
  ctx.stdout.write(`ステータス確認中 (${names})...`);
  const reply = await exchangeWithAgent(
    path,
    { type: 'status' },
    { timeoutMs: STATUS_PROBE_MS, clock: createSystemClock() },
  );
  if (!reply.ok) {
    ctx.stdout.write(
      reply.stage === 'timeout'
        ? `\n${redLine('タイムアウト', 'ステータス確認がタイムアウトしました')}`
        : `\n${redLine('エラー', reply.text)}`,
    );
    return 1;
  }
  const object = asObject(reply.value);
  if (object === undefined) {
    ctx.stdout.write(`\n${redLine('エラー', 'reply is not a JSON object')}`);
    return 1;
  }
  ctx.stdout.write(` OK\n${report(object)}`);
  return 0;
}

/** `yadon _status [agent_name]`: one envelope line with the status reply; always exit 0. */
export async function statusJsonCommand(ctx: CliContext, agentName: string | undefined): Promise<void> {
  const path = agentSocketPath(resolveSocketDir(ctx.env), agentName ?? MANAGER_NAME);
  const reply = await exchangeWithAgent(
    path,
    { type: 'status' },
    { timeoutMs: STATUS_PROBE_MS, clock: createSystemClock() },
  );
  if (reply.ok) {
    ctx.stdout.write(envelopeLine({ success: true, message: '', data: reply.value }));
    return;
  }
  const message = reply.stage === 'timeout' ? 'ステータス確認がタイムアウトしました' : reply.text;
  ctx.stdout.write(envelopeLine({ success: false, message, data: null }));
}
