import type { KvState } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import {
  FLAG_KEYS,
  GROUP_FLAG_KEYS,
  groupOfFlag,
  type ChannelAvailability,
  type ChannelGroup,
  type FlagKey,
} from './channel.js';
import {
  ALL_GROUPS,
  CAPABILITY_LOST_CODES,
  controlStateSchema,
  initialControlState,
  needsGate,
  PRECHECK_PENDING,
  type Capability,
  type ControlState,
  type Gate,
} from './control-state.js';
import { SerialQueue } from '../../core/serial-queue.js';

/** Collaborators of {@link FlagControl}. */
export interface FlagControlOptions {
  readonly kv: KvState;
  /** The KV key of the persisted state. */
  readonly key: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The gate as currently configured. */
  readonly gate: () => Gate;
  /** Channel count of a group (0 = not configured). */
  readonly channelCount: (group: ChannelGroup) => number;
  /** Probes every channel of a group; ready when any channel is ready. Must not reject. */
  readonly probe: (group: ChannelGroup) => Promise<ChannelAvailability>;
  /** Called after every visible change (the gateway sends `agent_status_update`). */
  readonly onChange: () => void;
  /** Called when the master switch goes off (runs end_all). */
  readonly onMasterOff: () => Promise<void>;
  /** Called when a group flag goes off (drains queued work of its channels). */
  readonly onGroupOff: (group: ChannelGroup) => void;
}

/** Options of a flag or master change. */
export interface ChangeOptions {
  /** Persist the requested value as the user's intent (default true). */
  readonly persistIntent?: boolean;
}

/**
 * The agent server's switches (spec neko.md 4.5): the master switch, four group flags, the gate, group
 * capabilities decided by background probes (a newer toggle makes an older probe's result a no-op), a
 * one-shot notification and the persisted intent. Every change bumps the revision (persisted, so it never
 * goes back) and calls `onChange`.
 */
export class FlagControl {
  readonly #o: FlagControlOptions;
  #state: ControlState = initialControlState();
  #notification: string | null = null;
  readonly #generations = new Map<ChannelGroup, number>();
  readonly #writes = new SerialQueue();

  constructor(options: FlagControlOptions) {
    this.#o = options;
  }

  /** Loads the persisted state; capabilities of groups that are on start as pending again. */
  async load(): Promise<void> {
    const entry = await this.#o.kv.kvGet(this.#o.key);
    const saved = entry === null ? undefined : controlStateSchema.safeParse(entry.value).data;
    if (saved !== undefined) this.#state = saved;
  }

  /** The current state (read-only copy). */
  get state(): ControlState {
    return this.#state;
  }

  /** True when the master switch and the group's flag are both on. */
  isGroupEnabled(group: ChannelGroup): boolean {
    return this.#state.analyzerEnabled && this.#state.flags[GROUP_FLAG_KEYS[group]];
  }

  /** Reads and clears the one-shot notification (JSON text) . */
  takeNotification(): string | null {
    const n = this.#notification;
    this.#notification = null;
    return n;
  }

  /** Sets the notification `{"code", "details"}` (replacing any unread one). */
  notify(code: string, details: Record<string, unknown>): void {
    this.#notification = JSON.stringify({ code, details });
  }

  /** Applies the requested flag values (spec 4.5); probes of enabled groups continue in the background. */
  setFlags(requested: Partial<Record<FlagKey, boolean>>, options: ChangeOptions = {}): void {
    const before = this.#state;
    const persist = options.persistIntent !== false;
    for (const key of FLAG_KEYS) {
      const value = requested[key];
      if (value === undefined) continue;
      const group = groupOfFlag(key);
      const tookEffect = value ? this.#enable(group) : this.#disable(group);
      if (persist) {
        // ON is remembered only when it took effect; OFF always.
        const intent = { ...this.#state.intent.flags };
        if (!value || tookEffect) intent[key] = value;
        this.#state = { ...this.#state, intent: { ...this.#state.intent, flags: intent } };
      }
    }
    this.#commit(before);
  }

  /** The master switch (spec 3.3.1 `set_agent_enabled`). OFF runs end_all and keeps the sub-flags. */
  async setAgentEnabled(
    enabled: boolean,
    profile: Record<string, unknown>,
    options: ChangeOptions = {},
  ): Promise<void> {
    const before = this.#state;
    this.#state = { ...this.#state, analyzerEnabled: enabled, profile: enabled ? profile : {} };
    if (options.persistIntent !== false) {
      this.#state = { ...this.#state, intent: { ...this.#state.intent, analyzerEnabled: enabled } };
    }
    if (enabled) {
      const gate = this.#o.gate();
      for (const group of ['computer_use', 'browser_use'] as const) {
        this.#setCapability(group, {
          ready: false,
          reason: gate.ready ? PRECHECK_PENDING : (gate.reasons[0] ?? ''),
        });
      }
      for (const group of ALL_GROUPS) {
        if (this.#state.flags[GROUP_FLAG_KEYS[group]] && (gate.ready || !needsGate(group)))
          this.#startProbe(group);
      }
    }
    this.#commit(before, true);
    if (!enabled) await this.#o.onMasterOff();
  }

  /** Forgets the intent of a group (after failed restore probes). */
  clearIntent(key: FlagKey): void {
    const before = this.#state;
    const flags = { ...this.#state.intent.flags };
    delete flags[key];
    this.#state = { ...this.#state, intent: { ...this.#state.intent, flags } };
    this.#commit(before);
  }

  /** Re-probes every enabled group (after a configuration change). */
  reprobe(): void {
    for (const group of ALL_GROUPS) if (this.#state.flags[GROUP_FLAG_KEYS[group]]) this.#startProbe(group);
  }

  /** Resolves once every state write so far reached the store. */
  flush(): Promise<void> {
    return this.#writes.idle();
  }

  #enable(group: ChannelGroup): boolean {
    const key = GROUP_FLAG_KEYS[group];
    const gate = this.#o.gate();
    if (needsGate(group) && !gate.ready) {
      this.#setFlag(key, false);
      this.#setCapability(group, { ready: false, reason: gate.reasons[0] ?? '' });
      return false;
    }
    if (this.#o.channelCount(group) === 0) {
      this.#setFlag(key, false);
      this.notify('AGENT_CHANNEL_NOT_CONFIGURED', { flag: key });
      return false;
    }
    this.#setFlag(key, true);
    this.#startProbe(group);
    return true;
  }

  #disable(group: ChannelGroup): boolean {
    this.#setFlag(GROUP_FLAG_KEYS[group], false);
    this.#nextGeneration(group); // any probe still running is now stale
    this.#o.onGroupOff(group);
    return true;
  }

  #startProbe(group: ChannelGroup): void {
    const generation = this.#nextGeneration(group);
    this.#setCapability(group, { ready: false, reason: PRECHECK_PENDING });
    this.#runProbe(group, generation).catch((err: unknown) =>
      this.#o.logger.warn({ err, group }, 'capability probe failed'),
    );
  }

  async #runProbe(group: ChannelGroup, generation: number): Promise<boolean> {
    const availability = await this.#o.probe(group);
    if (this.#generations.get(group) !== generation) return availability.ready;
    const before = this.#state;
    const key = GROUP_FLAG_KEYS[group];
    if (availability.ready) {
      this.#setCapability(group, { ready: true, reason: '' });
    } else {
      this.#setFlag(key, false);
      this.#setCapability(group, { ready: false, reason: availability.reasons[0] ?? '' });
      this.notify(CAPABILITY_LOST_CODES[group], { flag: key, reasons: [...availability.reasons] });
    }
    this.#commit(before);
    return availability.ready;
  }

  #nextGeneration(group: ChannelGroup): number {
    const next = (this.#generations.get(group) ?? 0) + 1;
    this.#generations.set(group, next);
    return next;
  }

  #setFlag(key: FlagKey, value: boolean): void {
    this.#state = { ...this.#state, flags: { ...this.#state.flags, [key]: value } };
  }

  #setCapability(group: ChannelGroup, capability: Capability): void {
    const current = this.#state.capabilities[group];
    if (current.ready === capability.ready && current.reason === capability.reason) return;
    this.#state = { ...this.#state, capabilities: { ...this.#state.capabilities, [group]: capability } };
  }

  /**
   * Persists the state; when something main can see changed (master, profile, flags, capabilities) the
   * revision goes up by one and `onChange` fires. A refused enable that changed nothing stays silent, so
   * its notification waits for the next snapshot or GET /agent/flags.
   */
  #commit(before: ControlState, isForced = false): void {
    const after = this.#state;
    const isVisible =
      isForced ||
      before.analyzerEnabled !== after.analyzerEnabled ||
      JSON.stringify([before.profile, before.flags, before.capabilities]) !==
        JSON.stringify([after.profile, after.flags, after.capabilities]);
    if (isVisible) this.#state = { ...after, revision: after.revision + 1 };
    const snapshot = this.#state;
    void this.#writes.run(() =>
      this.#o.kv.kvSet(this.#o.key, snapshot).then(
        () => undefined,
        (err: unknown) => this.#o.logger.warn({ err }, 'agent control state not persisted'),
      ),
    );
    if (isVisible) this.#o.onChange();
  }
}
