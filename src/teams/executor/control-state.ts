import { z } from 'zod';
import { CHANNEL_GROUPS, type ChannelGroup } from './channel.js';

/** Capability reason while a group's background probe runs. */
export const PRECHECK_PENDING = 'AGENT_PRECHECK_PENDING';
/** Gate reason when no assessor LLM is configured. */
export const ENDPOINT_NOT_CONFIGURED = 'AGENT_ENDPOINT_NOT_CONFIGURED';

const flagsSchema = z.object({
  computer_use_enabled: z.boolean(),
  browser_use_enabled: z.boolean(),
  user_plugin_enabled: z.boolean(),
  openclaw_enabled: z.boolean(),
});
/** The four group flags. */
export type GroupFlags = z.infer<typeof flagsSchema>;

const capabilitySchema = z.object({ ready: z.boolean(), reason: z.string() });
/** A group's readiness: ready, or the `AGENT_*` reason it is not (`""` when none is known). */
export type Capability = z.infer<typeof capabilitySchema>;

/** The persisted control state of one agent server (flags, master, intent, revision, capabilities). */
export const controlStateSchema = z.object({
  revision: z.number().int().nonnegative(),
  analyzerEnabled: z.boolean(),
  profile: z.record(z.string(), z.unknown()),
  flags: flagsSchema,
  capabilities: z.object({
    computer_use: capabilitySchema,
    browser_use: capabilitySchema,
    user_plugin: capabilitySchema,
    openclaw: capabilitySchema,
  }),
  /** What the user explicitly asked for last: restored on the first intent-restore signal. */
  intent: z.object({
    analyzerEnabled: z.boolean().optional(),
    flags: z.record(z.string(), z.boolean()),
  }),
});
export type ControlState = z.infer<typeof controlStateSchema>;

/** Whether the assessor LLM is usable (`is_free_version` is always false). */
export interface Gate {
  readonly ready: boolean;
  readonly reasons: readonly string[];
}

/** The state before anything was ever switched: all off, every capability pending. */
export function initialControlState(): ControlState {
  const pending = { ready: false, reason: PRECHECK_PENDING };
  return {
    revision: 0,
    analyzerEnabled: false,
    profile: {},
    flags: {
      computer_use_enabled: false,
      browser_use_enabled: false,
      user_plugin_enabled: false,
      openclaw_enabled: false,
    },
    capabilities: { computer_use: pending, browser_use: pending, user_plugin: pending, openclaw: pending },
    intent: { flags: {} },
  };
}

/** Notification code when a group's probe finds no ready channel. */
export const CAPABILITY_LOST_CODES: Record<ChannelGroup, string> = {
  computer_use: 'AGENT_CU_CAPABILITY_LOST',
  browser_use: 'AGENT_AUTO_DISABLED_BROWSER',
  user_plugin: 'AGENT_NO_PLUGINS_FOUND',
  openclaw: 'AGENT_OPENCLAW_CAPABILITY_LOST',
};

/** Notification code when an auto-restored group fails its probes. */
export const AUTO_DISABLED_CODES: Partial<Record<ChannelGroup, string>> = {
  computer_use: 'AGENT_AUTO_DISABLED_COMPUTER',
  browser_use: 'AGENT_AUTO_DISABLED_BROWSER',
};

/** True for a group whose enabling needs the gate (everything but user_plugin). */
export function needsGate(group: ChannelGroup): boolean {
  return group !== 'user_plugin';
}

/** Every group, for iteration in a stable order. */
export const ALL_GROUPS: readonly ChannelGroup[] = CHANNEL_GROUPS;
