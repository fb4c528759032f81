import { z } from 'zod';

/** Spec defaults (neko.md 2.1, 2.3). */
export const DEFAULT_NEKO_HTTP_PORT = 48915;
export const DEFAULT_NEKO_SESSION_PUB_PORT = 48961;
export const DEFAULT_NEKO_AGENT_PUSH_PORT = 48962;
export const DEFAULT_NEKO_ANALYZE_PUSH_PORT = 48963;
export const DEFAULT_NEKO_ASSESSOR_TIMEOUT_MS = 60_000;

const port = z.number().int().min(0).max(65535);
const timeoutMs = z.number().int().positive().optional();
const httpUrl = z.url().refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL');

const channelCommon = {
  id: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'channel ids use letters, digits, _ . -'),
  /** Text shown to the assessment LLM; each kind has a default. */
  description: z.string().min(1).optional(),
  group: z.enum(['computer_use', 'browser_use', 'openclaw', 'user_plugin']).optional(),
};

const channelSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    ...channelCommon,
    kind: z.literal('shell'),
    argv: z.array(z.string().min(1)).min(1),
    /** Relative to `workDir`, and must stay inside it. */
    cwd: z.string().default('.'),
    timeoutMs,
  }),
  z.strictObject({
    ...channelCommon,
    kind: z.literal('cli-agent'),
    /** An agent of the `agents` section, or a backend name (claude, codex, gemini, copilot, opencode, scripted). */
    agent: z.string().min(1),
    cwd: z.string().default('.'),
    timeoutMs,
  }),
  z.strictObject({
    ...channelCommon,
    kind: z.literal('webhook'),
    url: httpUrl,
    healthUrl: httpUrl.optional(),
    timeoutMs,
  }),
  z.strictObject({
    ...channelCommon,
    kind: z.literal('plugins'),
    /** Folder of plugin folders, relative to `workDir`. */
    dir: z.string().default('plugins'),
  }),
]);

/** One configured channel. */
export type NekoChannelConfig = z.infer<typeof channelSchema>;

/** The `neko` section of musubi.yaml: musubi as N.E.K.O.'s agent server (docs/neko.md). */
export const nekoConfigSchema = z
  .strictObject({
    /** `musubi up` starts the gateway when true (`musubi neko serve` always does). */
    enabled: z.boolean().default(false),
    /** Loopback only. */
    httpHost: z.enum(['127.0.0.1', '::1', 'localhost']).default('127.0.0.1'),
    httpPort: port.default(DEFAULT_NEKO_HTTP_PORT),
    /** ZeroMQ ports main binds; env NEKO_ZMQ_* overrides them (1..65535 only). */
    zmq: z
      .strictObject({
        sessionPubPort: port.default(DEFAULT_NEKO_SESSION_PUB_PORT),
        analyzePushPort: port.default(DEFAULT_NEKO_ANALYZE_PUSH_PORT),
        agentPushPort: port.default(DEFAULT_NEKO_AGENT_PUSH_PORT),
      })
      .default({
        sessionPubPort: DEFAULT_NEKO_SESSION_PUB_PORT,
        analyzePushPort: DEFAULT_NEKO_ANALYZE_PUSH_PORT,
        agentPushPort: DEFAULT_NEKO_AGENT_PUSH_PORT,
      }),
    /** The assessor LLM; without it the gate is not ready. */
    assessor: z
      .strictObject({
        agent: z.string().min(1),
        timeoutMs: z.number().int().positive().default(DEFAULT_NEKO_ASSESSOR_TIMEOUT_MS),
      })
      .optional(),
    /** Where LLM turns run and what shell channels are confined to. */
    workDir: z.string().default('.'),
    /** Channel ids in assessment priority order; unlisted channels follow by group order. */
    priority: z.array(z.string()).optional(),
    /** Proactive analysis (requests with `proactive: true`). */
    proactive: z.boolean().default(true),
    /** Switch the master and every configured group on at start (demo; no intent is persisted). */
    enableOnStart: z.boolean().default(false),
    /** `agent_bridge_heartbeat` interval; 0 sends none. */
    heartbeatMs: z.number().int().min(0).default(1000),
    channels: z.array(channelSchema).default([]),
  })
  .refine((c) => new Set(c.channels.map((ch) => ch.id)).size === c.channels.length, {
    message: 'channel ids must be unique',
    path: ['channels'],
  })
  .refine((c) => (c.priority ?? []).every((id) => c.channels.some((ch) => ch.id === id)), {
    message: 'priority names a channel that is not configured',
    path: ['priority'],
  });

/** The validated `neko` section. */
export type NekoConfig = z.infer<typeof nekoConfigSchema>;
