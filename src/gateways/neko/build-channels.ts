import { isAbsolute, relative, resolve } from 'node:path';
import type { AgentRunner } from '../../agents/agent-runner.js';
import type { ChildReaper } from '../../agents/process/child-reaper.js';
import type { Clock } from '../../core/clock.js';
import { MusubiError } from '../../core/errors.js';
import type { NekoChannelConfig } from '../../core/neko-config.schema.js';
import { CHANNEL_GROUPS, type Channel } from '../../teams/executor/channel.js';
import { createAgentChannel } from '../../teams/executor/channels/agent-channel.js';
import { createPluginChannel } from '../../teams/executor/channels/plugin-channel.js';
import { loadPluginFolder } from '../../teams/executor/channels/plugin-folder.js';
import { createShellChannel } from '../../teams/executor/channels/shell-channel.js';
import { createWebhookChannel } from '../../teams/executor/channels/webhook-channel.js';
import type { NekoSettings } from './neko-settings.js';

/** What building channels from config needs. */
export interface ChannelBuildDeps {
  /** The runner of an `agents.<name>` entry or of a backend name; throws AGENT_BACKEND_UNKNOWN. */
  readonly runnerFor: (agent: string) => AgentRunner;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly reaper: ChildReaper;
  readonly clock: Clock;
}

/** A path inside `root` (CONFIG_INVALID when it leaves it). */
function inside(root: string, path: string, what: string): string {
  const full = isAbsolute(path) ? path : resolve(root, path);
  const rel = relative(root, full);
  if (rel.startsWith('..') || isAbsolute(rel)) {
    throw new MusubiError('CONFIG_INVALID', `neko: ${what} ${path} is outside the work directory ${root}`);
  }
  return full;
}

async function buildOne(
  config: NekoChannelConfig,
  settings: NekoSettings,
  deps: ChannelBuildDeps,
  problems: string[],
): Promise<Channel> {
  const group = config.group === undefined ? {} : { group: config.group };
  const timeout =
    'timeoutMs' in config && config.timeoutMs !== undefined ? { timeoutMs: config.timeoutMs } : {};
  switch (config.kind) {
    case 'shell':
      return createShellChannel({
        id: config.id,
        description:
          config.description ??
          `runs local commands, scripts, tests and builds on this computer (${config.argv[0] ?? ''})`,
        argv: config.argv,
        cwd: inside(settings.workDir, config.cwd, `channel ${config.id} cwd`),
        root: settings.workDir,
        env: deps.env,
        reaper: deps.reaper,
        ...group,
        ...timeout,
      });
    case 'cli-agent': {
      const runner = deps.runnerFor(config.agent);
      return createAgentChannel({
        id: config.id,
        description:
          config.description ??
          `a coding agent (${runner.backend}) that writes and fixes code in the project`,
        runner,
        cwd: inside(settings.workDir, config.cwd, `channel ${config.id} cwd`),
        ...group,
        ...timeout,
      });
    }
    case 'webhook':
      return createWebhookChannel({
        id: config.id,
        description: config.description ?? 'hands the task to a remote agent over HTTP',
        url: config.url,
        ...(config.healthUrl !== undefined && { healthUrl: config.healthUrl }),
        ...group,
        ...timeout,
      });
    case 'plugins': {
      const loaded = await loadPluginFolder(
        inside(settings.workDir, config.dir, `channel ${config.id} dir`),
        deps,
      );
      problems.push(...loaded.problems.map((p) => `channel ${config.id}: ${p}`));
      return createPluginChannel({
        id: config.id,
        plugins: loaded.plugins,
        clock: deps.clock,
        ...(config.description !== undefined && { description: config.description }),
        ...(settings.pluginTimeoutMs !== undefined && { defaultTimeoutMs: settings.pluginTimeoutMs }),
        ...group,
      });
    }
  }
}

/**
 * Builds the configured channels in priority order: the `priority` list first, then the rest by group
 * (openclaw, browser_use, computer_use, user_plugin), config order within a group. Paths must stay
 * inside the work directory (CONFIG_INVALID). Plugins that fail validation are skipped and listed in
 * `problems`.
 */
export async function buildNekoChannels(
  settings: NekoSettings,
  deps: ChannelBuildDeps,
): Promise<{ channels: Channel[]; problems: string[] }> {
  const problems: string[] = [];
  const built: Channel[] = [];
  for (const config of settings.channels) built.push(await buildOne(config, settings, deps, problems));
  return { channels: orderChannels(built, settings.priority ?? []), problems };
}

/** Channels in assessment priority order (see {@link buildNekoChannels}). */
export function orderChannels(channels: readonly Channel[], priority: readonly string[]): Channel[] {
  const rank = (c: Channel): number => {
    const listed = priority.indexOf(c.id);
    return listed >= 0 ? listed : priority.length + CHANNEL_GROUPS.indexOf(c.group);
  };
  return channels
    .map((channel, index) => ({ channel, index }))
    .sort((a, b) => rank(a.channel) - rank(b.channel) || a.index - b.index)
    .map((e) => e.channel);
}
