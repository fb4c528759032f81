import type { ChannelRunResult, DeliveryMode } from '../channel.js';

/** What a plugin handler returns. */
export interface PluginHandlerResult {
  readonly success: boolean;
  readonly data?: unknown;
  readonly meta?: unknown;
  readonly error?: string | undefined;
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, key)
    ? Reflect.get(value, key)
    : undefined;
}

/** `meta.agent.delivery`: a mode name, `true` → proactive, `false` → silent, anything else → proactive. */
export function deliveryOf(meta: unknown): DeliveryMode {
  const raw = field(field(meta, 'agent'), 'delivery');
  if (raw === 'proactive' || raw === 'passive' || raw === 'silent') return raw;
  return raw === false ? 'silent' : 'proactive';
}

/** Terminal status of a plugin result (spec neko.md 4.3, plugin entries). */
export function pluginStatus(result: PluginHandlerResult): 'completed' | 'failed' | 'blocked' {
  if (!result.success) return 'failed';
  const data = result.data;
  if (field(data, 'observation_only') === true) return 'completed';
  const status = field(data, 'status');
  if (status === 'error') return 'failed';
  if (
    field(data, 'needs_confirmation') === true ||
    field(data, 'action') === 'clarify' ||
    status === 'blocked' ||
    status === 'clarify' ||
    status === 'confirm_required'
  ) {
    return 'blocked';
  }
  return 'completed';
}

function summaryOf(result: PluginHandlerResult): string {
  for (const key of ['summary', 'message', 'text', 'reply']) {
    const value = field(result.data, key);
    if (typeof value === 'string' && value !== '') return value;
  }
  if (!result.success) return result.error ?? 'plugin failed';
  return result.data === undefined ? 'done' : JSON.stringify(result.data);
}

/** Maps a handler result to a channel result: status, delivery, deferral, summary and detail. */
export function toChannelResult(result: PluginHandlerResult, pluginId: string): ChannelRunResult {
  const status = pluginStatus(result);
  const detail = result.data === undefined ? '' : JSON.stringify(result.data);
  return {
    success: status === 'completed',
    summary: summaryOf(result),
    detail,
    status,
    delivery: deliveryOf(result.meta),
    source: { kind: 'plugin', name: pluginId },
    ...(result.data !== undefined && { data: result.data }),
    ...(result.error !== undefined && { error: result.error }),
    ...(result.success && field(result.data, 'deferred') === true && { deferred: true }),
  };
}
