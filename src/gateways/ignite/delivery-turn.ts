import { existsSync } from 'node:fs';
import { appendFile, mkdir } from 'node:fs/promises';
import type { AgentRunResult } from '../../agents/agent-runner.js';
import { agentIndex } from './agent-names.js';
import type { FailureKind } from './dead-letter-bodies.js';
import { readSessionId } from './leader-gate.js';
import { writeFileAtomic } from './mime/atomic-file.js';
import type { MonitorContext } from './monitor-context.js';
import { acquireSendLock } from './state-locks.js';

/** The one text ever given to an agent for a message (spec/ignite.md 3.4). */
export function deliveryPrompt(absolutePath: string): string {
  return `新しいメッセージが来ました。${absolutePath} を読んで処理してください。`;
}

async function logSession(
  ctx: MonitorContext,
  agent: string,
  sessionId: string,
  result: AgentRunResult,
): Promise<void> {
  const record = {
    ts: new Date(ctx.clock.now()).toISOString(),
    role: agent,
    sid: result.sessionId ?? sessionId,
    provider: result.backend,
    type: 'response',
    data: {
      text: result.text.slice(0, 4000),
      exitCode: result.exitCode,
      isError: result.isError,
      durationMs: result.durationMs,
      usage: result.usage ?? null,
    },
  };
  try {
    await mkdir(ctx.paths.logs, { recursive: true });
    await appendFile(`${ctx.paths.logs}/session_${agent}.jsonl`, `${JSON.stringify(record)}\n`, {
      mode: 0o600,
    });
  } catch (err) {
    ctx.logger.warn({ agent, err }, 'cannot append the session log');
  }
}

/**
 * One agent turn for a claimed file (spec/ignite.md 4.4): the agent must have an index, no recovery lock
 * and a recorded session; deliveries to it are serialised by `.send_lock_<idx>`; the runner gets exactly
 * the delivery prompt, in the workspace, resuming the recorded session, stopped after `max_turn`.
 * Resolves 'ok' when the turn succeeded, else the kind of failure. Never rejects for a failed turn.
 */
export async function runTurn(
  ctx: MonitorContext,
  agent: string,
  path: string,
  signal?: AbortSignal,
): Promise<'ok' | FailureKind> {
  const log = ctx.logger.child({ agent, file: path.slice(path.lastIndexOf('/') + 1) });
  const idx = agentIndex(agent);
  if (idx === null) {
    log.error(`未知のエージェント: ${agent}`);
    return 'failed';
  }
  if (existsSync(`${ctx.paths.state}/.recovery_pane_${idx}.lock`)) {
    log.warn('agent is being recovered (recovery lock present); delivery failed');
    return 'failed';
  }
  const sessionId = await readSessionId(ctx.paths.state, idx);
  if (sessionId === '') {
    log.warn(`no agent session recorded (.agent_session_${idx}); delivery failed`);
    return 'failed';
  }
  const release = await acquireSendLock(
    `${ctx.paths.state}/.send_lock_${idx}`,
    ctx.settings().sendLockTimeoutMs,
    signal,
  );
  if (release === null) {
    log.warn('send lock timed out; delivery failed');
    return 'failed';
  }
  try {
    const systemPrompt = ctx.systemPromptFor?.(agent);
    const result = await ctx.runnerFor(agent).run({
      prompt: deliveryPrompt(path),
      cwd: ctx.workspace,
      sessionId,
      timeoutMs: ctx.settings().maxTurnMs,
      ...(signal !== undefined && { signal }),
      ...(systemPrompt !== undefined && { systemPrompt }),
    });
    await logSession(ctx, agent, sessionId, result);
    if (result.sessionId !== undefined && result.sessionId !== '' && result.sessionId !== sessionId) {
      await writeFileAtomic(`${ctx.paths.state}/.agent_session_${idx}`, `${result.sessionId}\n`).catch(
        (err: unknown) => log.warn({ err }, 'cannot record the new session id'),
      );
    }
    if (!result.isError) return 'ok';
    log.warn(
      { exitCode: result.exitCode, timedOut: result.timedOut, stderr: result.stderrTail.slice(-500) },
      'agent turn failed',
    );
    return result.timedOut ? 'timeout' : 'failed';
  } catch (err) {
    log.error({ err }, 'agent turn could not start');
    return 'failed';
  } finally {
    await release();
  }
}
