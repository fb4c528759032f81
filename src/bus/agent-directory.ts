import { z } from 'zod';
import type { Clock } from '../core/clock.js';
import { isMusubiError } from '../core/errors.js';
import { assertMailboxName } from '../core/names.js';
import type { Bus } from './bus.types.js';

/** The protocols an agent can be attached through. */
export const AGENT_PROTOCOLS = ['agent-sync', 'yadon', 'ignite', 'neko', 'mcp', 'http', 'bus'] as const;
export type AgentProtocol = (typeof AGENT_PROTOCOLS)[number];

/** What an agent is doing, as far as its gateway knows. */
export const AGENT_STATES = ['idle', 'busy', 'waiting', 'offline', 'error'] as const;
export type AgentState = (typeof AGENT_STATES)[number];

const agentRecordSchema = z.object({
  name: z.string(),
  protocol: z.enum(AGENT_PROTOCOLS),
  state: z.enum(AGENT_STATES),
  role: z.string().optional(),
  team: z.string().optional(),
  backend: z.string().optional(),
  /** The model the agent's turns run on, when known. */
  model: z.string().optional(),
  /** The `musubi run` the agent is a member of, while that run lives. */
  run: z.string().optional(),
  currentTask: z.string().optional(),
  bubble: z.string().optional(),
  lastSeen: z.number(),
});

/** One agent as the dashboard and other gateways see it (KV row `agents/<name>`). */
export type AgentRecord = z.infer<typeof agentRecordSchema>;

/** Fields a gateway may report about an agent; absent fields keep their value, `null` clears one. */
export type AgentUpdate = {
  readonly protocol?: AgentProtocol;
  readonly state?: AgentState;
} & {
  readonly [K in 'role' | 'team' | 'backend' | 'model' | 'run' | 'currentTask' | 'bubble']?: string | null;
};

const KEY_PREFIX = 'agents/';
const MAX_CAS_ATTEMPTS = 20;
/** Bubbles are short speech: longer text is cut so one chatty agent cannot bloat every dashboard. */
export const MAX_BUBBLE_CHARS = 280;

/**
 * Every agent known to the hub, whatever protocol it speaks: a KV row per agent plus an
 * `agent.status_changed` event per change, so gateways, teams and the dashboard share one view.
 */
export class AgentDirectory {
  readonly #bus: Pick<Bus, 'kv' | 'publish'>;
  readonly #clock: Clock;

  constructor(options: { readonly bus: Pick<Bus, 'kv' | 'publish'>; readonly clock: Clock }) {
    this.#bus = options.bus;
    this.#clock = options.clock;
  }

  /**
   * Creates or updates the record of `name` (MAILBOX_NAME_INVALID for a bad name) and publishes the
   * change. A new record needs `protocol`; it defaults to `bus`. Resolves the record as written.
   */
  async update(name: string, update: AgentUpdate): Promise<AgentRecord> {
    const key = KEY_PREFIX + assertMailboxName(name);
    for (let attempt = 0; ; attempt++) {
      const entry = await this.#bus.kv.kvGet(key);
      const current = entry === null ? undefined : agentRecordSchema.safeParse(entry.value).data;
      const next = merge(current, name, update, this.#clock.now());
      try {
        await this.#bus.kv.kvSet(key, next, { expectedRevision: entry?.revision ?? 0 });
      } catch (err) {
        if (isMusubiError(err, 'STORE_CONFLICT') && attempt < MAX_CAS_ATTEMPTS) continue;
        throw err;
      }
      await this.#bus.publish({ type: 'agent.status_changed', data: { ...next } });
      return next;
    }
  }

  /**
   * Takes `name` out of the directory (a run's member once the run ended; its turns stay in the turn
   * log) and publishes `agent.removed`. A name not in the directory is a no-op, without an event.
   */
  async remove(name: string): Promise<void> {
    const key = KEY_PREFIX + assertMailboxName(name);
    if ((await this.#bus.kv.kvGet(key)) === null) return;
    await this.#bus.kv.kvDelete(key);
    await this.#bus.publish({ type: 'agent.removed', data: { name } });
  }

  /** The record of one agent, or null. */
  async get(name: string): Promise<AgentRecord | null> {
    const entry = await this.#bus.kv.kvGet(KEY_PREFIX + assertMailboxName(name));
    return entry === null ? null : (agentRecordSchema.safeParse(entry.value).data ?? null);
  }

  /** Every agent, sorted by name; rows that fail validation are left out. */
  async list(): Promise<AgentRecord[]> {
    const entries = await this.#bus.kv.kvList(KEY_PREFIX);
    return entries.flatMap((e) => {
      const parsed = agentRecordSchema.safeParse(e.value);
      return parsed.success ? [parsed.data] : [];
    });
  }
}

function merge(
  current: AgentRecord | undefined,
  name: string,
  update: AgentUpdate,
  now: number,
): AgentRecord {
  const next: AgentRecord = {
    ...(current ?? { name, protocol: 'bus', state: 'idle' }),
    lastSeen: now,
  };
  if (update.protocol !== undefined) next.protocol = update.protocol;
  if (update.state !== undefined) next.state = update.state;
  for (const field of ['role', 'team', 'backend', 'model', 'run', 'currentTask', 'bubble'] as const) {
    const value = update[field];
    if (value === null) delete next[field];
    else if (value !== undefined) next[field] = field === 'bubble' ? value.slice(0, MAX_BUBBLE_CHARS) : value;
  }
  return next;
}
