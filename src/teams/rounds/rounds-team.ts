import type { KvState } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import { MusubiError } from '../../core/errors.js';
import { DiscussionLog } from './discussion-log.js';
import {
  initialRoundsState,
  roundsStateSchema,
  type DiscussionEntry,
  type Opaque,
  type Phase,
  type PhaseChange,
  type RoundsState,
} from './rounds-state.js';
import { SerialQueue } from '../../core/serial-queue.js';

/** Options of {@link RoundsTeam}. */
export interface RoundsTeamOptions {
  /** The bus's key-value state; the team keeps everything under `teams/rounds/<teamId>/`. */
  readonly kv: KvState;
  readonly clock: Clock;
  /** KV-safe team id (letters, digits, `_ - .`). */
  readonly teamId: string;
  /** The configured members in order; duplicates are kept and counted. */
  readonly members: readonly string[];
}

/** A refused operation: nothing changed. */
export type RoundsRefusal =
  | { readonly ok: false; readonly reason: 'not-a-member' }
  | { readonly ok: false; readonly reason: 'wrong-phase'; readonly phase: Phase }
  | { readonly ok: false; readonly reason: 'not-implementer'; readonly implementer: string };

/** Runs before a phase change is committed; a rejection aborts the operation. */
export type BeforeCommit = (state: RoundsState) => Promise<void>;

/**
 * The `rounds` coordination pattern: flat peers cycling IMPLEMENT -> TEST -> DISCUSS -> next round, one
 * implementer per round. Gateway-agnostic: callers pass names and opaque payloads and announce the
 * returned {@link PhaseChange}s themselves. Every change is committed to KV (compare-and-set on one state
 * value) before the method resolves; operations run one at a time. STORE_CONFLICT means another writer
 * changed the team; the in-memory state is then reloaded and the operation fails.
 */
export class RoundsTeam {
  readonly members: readonly string[];
  readonly #kv: KvState;
  readonly #clock: Clock;
  readonly #stateKey: string;
  readonly #log: DiscussionLog;
  #state: RoundsState = initialRoundsState();
  #revision = 0;
  readonly #queue = new SerialQueue();

  constructor(options: RoundsTeamOptions) {
    this.#kv = options.kv;
    this.#clock = options.clock;
    this.members = [...options.members];
    this.#stateKey = `teams/rounds/${options.teamId}/state`;
    this.#log = new DiscussionLog({ kv: options.kv, prefix: `teams/rounds/${options.teamId}/discussion` });
  }

  /** The current state (read-only snapshot; replaced, never mutated, by operations). */
  get state(): RoundsState {
    return this.#state;
  }

  /** Every discussion entry, oldest first. */
  discussion(): readonly DiscussionEntry[] {
    return this.#log.entries();
  }

  /** Loads the persisted state (initial state when none). Throws STORE_CORRUPT on invalid data. */
  load(): Promise<RoundsState> {
    return this.#serial(async () => {
      const entry = await this.#kv.kvGet(this.#stateKey);
      if (entry === null) [this.#state, this.#revision] = [initialRoundsState(), 0];
      else {
        const parsed = roundsStateSchema.safeParse(entry.value);
        if (!parsed.success) throw new MusubiError('STORE_CORRUPT', `${this.#stateKey} is not valid`);
        [this.#state, this.#revision] = [parsed.data, entry.revision];
      }
      await this.#log.load();
      return this.#state;
    });
  }

  /** Returns to the initial state and deletes the discussion log. */
  reset(): Promise<void> {
    return this.#serial(async () => {
      await this.#log.clear();
      await this.#commit(initialRoundsState());
    });
  }

  /** Joins (or re-joins, resetting the record) a member; the first joiner of an empty team implements. */
  join(name: string): Promise<{ readonly ok: true; readonly state: RoundsState } | RoundsRefusal> {
    return this.#serial(async () => {
      if (!this.members.includes(name)) return { ok: false, reason: 'not-a-member' } as const;
      const s = this.#state;
      const record = { name, joinedAtMs: this.#clock.now() };
      const agents = s.agents.some((a) => a.name === name)
        ? s.agents.map((a) => (a.name === name ? record : a))
        : [...s.agents, record];
      await this.#commit({ ...s, agents, implementer: s.implementer === '' ? name : s.implementer });
      return { ok: true, state: this.#state } as const;
    });
  }

  /** Records a heartbeat for a joined agent; other names are ignored. */
  heartbeat(name: unknown): Promise<RoundsState> {
    return this.#serial(async () => {
      const s = this.#state;
      if (!s.agents.some((a) => a.name === name)) return s;
      const now = this.#clock.now();
      await this.#commit({
        ...s,
        agents: s.agents.map((a) => (a.name === name ? { ...a, lastHeartbeatMs: now } : a)),
      });
      return this.#state;
    });
  }

  /** IMPLEMENT -> TEST, by the implementer (anyone while there is none). */
  implDone(
    caller: unknown,
    beforeCommit: BeforeCommit,
  ): Promise<{ readonly ok: true; readonly change: PhaseChange } | RoundsRefusal> {
    return this.#serial(async () => {
      const s = this.#state;
      if (s.phase !== 'IMPLEMENT') return { ok: false, reason: 'wrong-phase', phase: s.phase } as const;
      if (s.implementer !== '' && caller !== s.implementer) {
        return { ok: false, reason: 'not-implementer', implementer: s.implementer } as const;
      }
      await beforeCommit(s);
      return { ok: true, change: await this.#setPhase(s, 'TEST') } as const;
    });
  }

  /**
   * Stores a test result (always, in any phase), runs `afterStore`, then in TEST moves to DISCUSS with
   * the discuss-done marks cleared. If `afterStore` rejects, the result stays stored and nothing else changes.
   */
  testResult(result: string, afterStore: BeforeCommit): Promise<{ readonly change: PhaseChange | null }> {
    return this.#serial(async () => {
      await this.#commit({ ...this.#state, testResult: result });
      await afterStore(this.#state);
      const s = this.#state;
      if (s.phase !== 'TEST') return { change: null };
      return { change: await this.#setPhase({ ...s, discussDone: [] }, 'DISCUSS') };
    });
  }

  /**
   * Appends a discussion entry for the current round. Resolves the recipients: each joined member other
   * than `sender`, in member order (a member listed twice is returned twice).
   */
  discuss(
    sender: unknown,
    label: (round: number) => string,
  ): Promise<{ readonly ok: true; readonly round: number; readonly recipients: string[] } | RoundsRefusal> {
    return this.#serial(async () => {
      const s = this.#state;
      if (s.phase !== 'DISCUSS') return { ok: false, reason: 'wrong-phase', phase: s.phase } as const;
      await this.#log.append({ round: s.round, label: label(s.round) });
      const joined = new Set(s.agents.map((a) => a.name));
      const recipients = this.members.filter((m) => joined.has(m) && m !== sender);
      return { ok: true, round: s.round, recipients } as const;
    });
  }

  /**
   * Marks `mark` done discussing. Once the marks reach the member count: next round, marks and test
   * result cleared, implementer := `nextImplementer` if it is a member (else unchanged), phase IMPLEMENT.
   */
  discussDone(
    mark: Opaque,
    nextImplementer: unknown,
  ): Promise<
    { readonly ok: true; readonly state: RoundsState; readonly change: PhaseChange | null } | RoundsRefusal
  > {
    return this.#serial(async () => {
      const s = this.#state;
      if (s.phase !== 'DISCUSS') return { ok: false, reason: 'wrong-phase', phase: s.phase } as const;
      const done = s.discussDone.some((d) => d.key === mark.key) ? s.discussDone : [...s.discussDone, mark];
      if (done.length < this.members.length) {
        await this.#commit({ ...s, discussDone: done });
        return { ok: true, state: this.#state, change: null } as const;
      }
      const isNext = typeof nextImplementer === 'string' && nextImplementer !== '';
      const implementer = isNext && this.members.includes(nextImplementer) ? nextImplementer : s.implementer;
      const next = { ...s, round: s.round + 1, discussDone: [], testResult: null, implementer };
      const change = await this.#setPhase(next, 'IMPLEMENT');
      return { ok: true, state: this.#state, change } as const;
    });
  }

  /** Sets any phase (no transition rules); round, marks, result and implementer are untouched. */
  setPhase(phase: Phase): Promise<PhaseChange> {
    return this.#serial(() => this.#setPhase(this.#state, phase));
  }

  async #setPhase(base: RoundsState, phase: Phase): Promise<PhaseChange> {
    await this.#commit({ ...base, phase });
    const recipients = this.#state.agents.map((a) => a.name);
    return { from: base.phase, to: phase, round: base.round, recipients };
  }

  async #commit(next: RoundsState): Promise<void> {
    try {
      const written = await this.#kv.kvSet(this.#stateKey, next, { expectedRevision: this.#revision });
      [this.#state, this.#revision] = [next, written.revision];
    } catch (err) {
      const entry = await this.#kv.kvGet(this.#stateKey).catch(() => null);
      const parsed = roundsStateSchema.safeParse(entry?.value);
      if (entry !== null && parsed.success) [this.#state, this.#revision] = [parsed.data, entry.revision];
      throw err;
    }
  }

  #serial<T>(op: () => Promise<T>): Promise<T> {
    return this.#queue.run(op);
  }
}
