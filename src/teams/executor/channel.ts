import type { PluginInfo } from './plugin-catalogue.js';

/**
 * The Channel port: a pluggable executor the executor team can hand a task to (a shell command, a CLI
 * coding agent, an HTTP webhook, plugin entries). Channels belong to one of N.E.K.O.'s four flag groups;
 * the group's flag switches all of its channels on or off.
 */

/** N.E.K.O.'s flag groups, in the default priority order of the channel assessment. */
export const CHANNEL_GROUPS = ['openclaw', 'browser_use', 'computer_use', 'user_plugin'] as const;
export type ChannelGroup = (typeof CHANNEL_GROUPS)[number];

/** The flag key of each group. */
export const GROUP_FLAG_KEYS = {
  computer_use: 'computer_use_enabled',
  browser_use: 'browser_use_enabled',
  user_plugin: 'user_plugin_enabled',
  openclaw: 'openclaw_enabled',
} as const satisfies Record<ChannelGroup, string>;
export type FlagKey = (typeof GROUP_FLAG_KEYS)[ChannelGroup];

/** The flag keys in wire order. */
export const FLAG_KEYS: readonly FlagKey[] = [
  'computer_use_enabled',
  'browser_use_enabled',
  'user_plugin_enabled',
  'openclaw_enabled',
];

const FLAG_GROUPS: Record<FlagKey, ChannelGroup> = {
  computer_use_enabled: 'computer_use',
  browser_use_enabled: 'browser_use',
  user_plugin_enabled: 'user_plugin',
  openclaw_enabled: 'openclaw',
};

/** The group a flag key switches. */
export function groupOfFlag(key: FlagKey): ChannelGroup {
  return FLAG_GROUPS[key];
}

/** True when `value` is one of the four flag keys. */
export function isFlagKey(value: unknown): value is FlagKey {
  return typeof value === 'string' && (FLAG_KEYS as readonly string[]).includes(value);
}

/**
 * How a channel runs tasks: `exclusive` = one FIFO queue, one task at a time, with a duplicate check;
 * `mutex` = one task at a time, no queue order guarantee beyond arrival; `unlimited` = start at once.
 */
export type ChannelConcurrency = 'exclusive' | 'mutex' | 'unlimited';

/** Whether a channel can run now, and why not. */
export interface ChannelAvailability {
  readonly ready: boolean;
  readonly reasons: readonly string[];
}

/** A plugin call, for channels of kind `plugins`. */
export interface PluginCall {
  readonly pluginId: string;
  readonly entryId: string;
  readonly args: Readonly<Record<string, unknown>>;
}

/** The task a channel runs. */
export interface ChannelTask {
  readonly id: string;
  /** The task description (what the assessment or caller asked for). */
  readonly instruction: string;
  readonly sessionKey: string;
  readonly conversationId?: string;
  readonly plugin?: PluginCall;
}

/** Progress a run reports; each call becomes a running `task_update`. */
export interface ChannelProgress {
  readonly progress?: number | undefined;
  readonly stage?: string | undefined;
  readonly message?: string | undefined;
  readonly step?: number | undefined;
  readonly stepTotal?: number | undefined;
}

/** How a finished task's result reaches the user. */
export type DeliveryMode = 'proactive' | 'passive' | 'silent';

/**
 * The outcome of one run. `status` is explicit only where the channel knows better than `success`
 * (`failed`, `cancelled`, `blocked`, `partial`); `deferred` keeps the task running until completed
 * from outside. Every field past `summary` is optional.
 */
export interface ChannelRunResult {
  readonly success: boolean;
  readonly summary: string;
  readonly detail?: string;
  readonly error?: string;
  readonly status?: 'completed' | 'failed' | 'cancelled' | 'blocked' | 'partial';
  readonly data?: unknown;
  readonly delivery?: DeliveryMode;
  readonly deferred?: boolean;
  /** `plugin` and the plugin id for plugin tasks. */
  readonly source?: { readonly kind: string; readonly name: string };
}

/** Options of {@link Channel.run}. */
export interface ChannelRunOptions {
  /** Aborted when the task is cancelled or the server stops; the run should end promptly. */
  readonly signal: AbortSignal;
  readonly onProgress: (progress: ChannelProgress) => void;
}

/**
 * One executor. `run` may throw (the task then fails with the message); it should honour `signal`.
 * `cancel` is a best-effort extra for channels with remote state; errors are only logged.
 */
export interface Channel {
  readonly id: string;
  readonly kind: string;
  readonly group: ChannelGroup;
  /** One line for the assessment prompt: what this channel can do. */
  readonly description: string;
  readonly concurrency: ChannelConcurrency;
  isAvailable(): Promise<ChannelAvailability>;
  run(task: ChannelTask, options: ChannelRunOptions): Promise<ChannelRunResult>;
  cancel(taskId: string): Promise<void>;
}

/** A channel of kind `plugins`: it also publishes the catalogue the plugin selection offers. */
export interface PluginChannel extends Channel {
  /** The plugins this channel can run (already validated). */
  catalogue(): readonly PluginInfo[];
}

/** True when `channel` serves plugin entries. */
export function isPluginChannel(channel: Channel): channel is PluginChannel {
  return channel.kind === 'plugins' && 'catalogue' in channel && typeof channel.catalogue === 'function';
}
