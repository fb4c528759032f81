import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { isTruthy } from '../../core/python/repr.js';
import { FLAG_KEYS, isFlagKey, type FlagKey } from '../../teams/executor/channel.js';
import { flagsObject, gateObject } from './neko-wire.js';
import { isJsonObject, sendDetail, type NekoApiContext } from './http-route-context.js';

function elapsedMs(startedAt: number): number {
  return Math.round((performance.now() - startedAt) * 1000) / 1000;
}

function requestedFlags(body: Record<string, unknown>): Partial<Record<FlagKey, boolean>> {
  const flags: Partial<Record<FlagKey, boolean>> = {};
  for (const key of FLAG_KEYS) if (key in body) flags[key] = isTruthy(body[key]);
  return flags;
}

function persistIntent(body: Record<string, unknown>): boolean {
  return !('_persist_intent' in body) || isTruthy(body['_persist_intent']);
}

async function setAgentEnabled(ctx: NekoApiContext, body: Record<string, unknown>): Promise<void> {
  const profile = isJsonObject(body['profile']) ? body['profile'] : {};
  await ctx.executor.flags.setAgentEnabled(isTruthy(body['enabled']), profile, {
    persistIntent: persistIntent(body),
  });
}

/** Flags, state, commands, admin control, availability and channels (spec neko.md 3.3). */
export function registerAgentRoutes(app: FastifyInstance, ctx: NekoApiContext): void {
  const { executor } = ctx;

  app.get('/health', () => ({
    status: 'ok',
    service: 'agent',
    instance_id: ctx.instanceId,
    agent_flags: flagsObject(executor.flags.state),
  }));

  app.get('/agent/flags', () => ({
    success: true,
    agent_flags: flagsObject(executor.flags.state),
    analyzer_enabled: executor.flags.state.analyzerEnabled,
    agent_api_gate: gateObject(executor.gate()),
    revision: executor.flags.state.revision,
    notification: executor.flags.takeNotification(),
  }));

  app.post('/agent/flags', (request) => {
    const body = isJsonObject(request.body) ? request.body : {};
    executor.flags.setFlags(requestedFlags(body), { persistIntent: persistIntent(body) });
    return { success: true, agent_flags: flagsObject(executor.flags.state) };
  });

  app.get('/agent/state', async (_request, reply) => {
    if (!executor.isReady) return sendDetail(reply, 503, 'Task executor not ready');
    return { success: true, snapshot: await ctx.snapshot() };
  });

  app.post('/agent/command', async (request, reply) => {
    const startedAt = performance.now();
    const body = isJsonObject(request.body) ? request.body : {};
    const requestId = typeof body['request_id'] === 'string' ? body['request_id'] : randomUUID();
    switch (body['command']) {
      case 'set_agent_enabled': {
        await setAgentEnabled(ctx, body);
        const gate = gateObject(executor.gate());
        return {
          success: true,
          request_id: requestId,
          is_free_version: false,
          agent_api_gate: gate,
          timing: { agent_total_ms: elapsedMs(startedAt) },
        };
      }
      case 'set_flag': {
        const key = body['key'];
        if (!isFlagKey(key)) return sendDetail(reply, 400, 'invalid flag key');
        const flagsStartedAt = performance.now();
        executor.flags.setFlags({ [key]: isTruthy(body['value']) }, { persistIntent: persistIntent(body) });
        return {
          success: true,
          request_id: requestId,
          timing: { set_flags_ms: elapsedMs(flagsStartedAt), agent_total_ms: elapsedMs(startedAt) },
        };
      }
      case 'refresh_state': {
        const snapshot = await ctx.snapshot();
        await ctx.emitStatus();
        return {
          success: true,
          request_id: requestId,
          snapshot,
          timing: { agent_total_ms: elapsedMs(startedAt) },
        };
      }
      default:
        return sendDetail(reply, 400, 'unknown command');
    }
  });

  app.post('/admin/control', async (request, reply) => {
    const body = isJsonObject(request.body) ? request.body : {};
    switch (body['action']) {
      case 'end_all':
        await executor.endAll();
        return { success: true, message: 'all tasks terminated and cleared' };
      case 'enable_analyzer': {
        const profile = isJsonObject(body['profile']) ? body['profile'] : {};
        await executor.flags.setAgentEnabled(true, profile);
        return { success: true, analyzer_enabled: true, profile };
      }
      case 'disable_analyzer':
        await executor.flags.setAgentEnabled(false, {});
        return { success: true, analyzer_enabled: false };
      default:
        return sendDetail(reply, 400, 'unknown action');
    }
  });

  app.get('/capabilities', () => ({ success: true, capabilities: {} }));

  app.get('/computer_use/availability', async () => {
    const gate = executor.gate();
    if (!gate.ready) return { ready: false, reasons: [...gate.reasons] };
    const a = await executor.availability('computer_use');
    return { ready: a.ready, reasons: [...a.reasons] };
  });

  app.get('/browser_use/availability', async () => {
    const gate = executor.gate();
    if (!gate.ready) return { ready: false, reasons: [...gate.reasons] };
    const a = await executor.availability('browser_use');
    const provider = executor.channels.find((c) => c.group === 'browser_use')?.id ?? '';
    return { enabled: true, ready: a.ready, reasons: [...a.reasons], provider };
  });

  app.get('/openclaw/availability', async () => {
    if (!executor.channels.some((c) => c.group === 'openclaw')) {
      return { enabled: false, ready: false, reasons: ['no channel configured'] };
    }
    const a = await executor.availability('openclaw');
    return { ready: a.ready, reasons: [...a.reasons] };
  });

  app.get('/mcp/availability', () => ({ ready: false, capabilities_count: 0, reasons: ['MCP 已移除'] }));

  app.post('/notify_config_changed', async () => ({ success: true, message: await ctx.reloadConfig() }));

  app.get('/channels', async () => ({
    success: true,
    channels: await Promise.all(
      executor.channels.map(async (c) => {
        const a = await executor.probeChannel(c);
        return {
          id: c.id,
          kind: c.kind,
          group: c.group,
          concurrency: c.concurrency,
          description: c.description,
          ready: a.ready,
          reasons: [...a.reasons],
        };
      }),
    ),
  }));
}
