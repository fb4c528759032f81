import { isPluginChannel, type Channel } from './channel.js';
import type { DispatchPlan } from './dispatcher.js';
import { matchesKeyword, visiblePlugins } from './plugin-catalogue.js';

/** A direct plugin call (HTTP `/plugin/execute`), with no assessment and no duplicate check. */
export interface PluginDirectCall {
  readonly pluginId: string;
  readonly entryId: string;
  readonly args: Record<string, unknown>;
  readonly sessionKey: string;
  readonly conversationId?: string;
}

/**
 * The `plugin_direct` task of `call`: on the plugin channel whose catalogue has the plugin, else the
 * first plugin channel (which then fails the task as unknown). Null without plugin channels.
 */
export function pluginDirectPlan(channels: readonly Channel[], call: PluginDirectCall): DispatchPlan | null {
  const pluginChannels = channels.filter(isPluginChannel);
  const channel =
    pluginChannels.find((c) => c.catalogue().some((p) => p.id === call.pluginId)) ?? pluginChannels[0];
  if (channel === undefined) return null;
  const name = channel.catalogue().find((p) => p.id === call.pluginId)?.name;
  return {
    channel,
    type: 'plugin_direct',
    params: {
      plugin_id: call.pluginId,
      entry_id: call.entryId,
      args: call.args,
      ...(name !== undefined && { plugin_name: name }),
    },
    task: {
      instruction: `${call.pluginId}.${call.entryId}`,
      sessionKey: call.sessionKey,
      plugin: { pluginId: call.pluginId, entryId: call.entryId, args: call.args },
      ...(call.conversationId !== undefined && { conversationId: call.conversationId }),
    },
    meta: { method: `plugin:${call.pluginId}.${call.entryId}` },
  };
}

/**
 * The pre-gate's deterministic signal (spec 4.1 step 5): a plugin keyword matching the latest user text,
 * a dispatchable plugin without keywords, or a plugin catalogue that is not loaded yet.
 */
export function hasDeterministicSignal(
  channels: readonly Channel[],
  isPluginGroupEnabled: boolean,
  text: string,
): boolean {
  const pluginChannels = channels.filter(isPluginChannel);
  if (pluginChannels.length === 0 || !isPluginGroupEnabled) return false;
  const plugins = pluginChannels.flatMap((c) => [...c.catalogue()]);
  if (plugins.length === 0) return true; // catalogue not loaded yet: never gate on a guess
  return visiblePlugins(plugins).some((p) => (p.keywords ?? []).length === 0 || matchesKeyword(p, text));
}
