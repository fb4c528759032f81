import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { KvState } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { addRecord, trackerRecordSchema, type TrackerRecord } from './task-tracker.js';

const sessionStateSchema = z.object({
  key: z.string(),
  consumedFingerprint: z.string().optional(),
  proactiveFingerprint: z.string().optional(),
  proactiveCount: z.number().int().nonnegative(),
  records: z.array(trackerRecordSchema),
});
/** What the executor remembers per session key. */
export type SessionState = z.infer<typeof sessionStateSchema>;

/**
 * Per-session memory of the executor: the last consumed user-turn fingerprint, the proactive
 * fingerprint and counter, and the tracker records. Kept in memory and written through to KV
 * (`<prefix><sha1 of the key>`; session keys are opaque text), so a restart keeps it.
 */
export class SessionMemory {
  readonly #kv: KvState;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #prefix: string;
  readonly #sessions = new Map<string, SessionState>();
  #writes: Promise<void> = Promise.resolve();

  constructor(options: { kv: KvState; clock: Clock; logger: Logger; prefix: string }) {
    this.#kv = options.kv;
    this.#clock = options.clock;
    this.#log = options.logger;
    this.#prefix = options.prefix;
  }

  /** Reads every persisted session (call once at start). */
  async load(): Promise<void> {
    for (const entry of await this.#kv.kvList(this.#prefix)) {
      const state = sessionStateSchema.safeParse(entry.value).data;
      if (state !== undefined) this.#sessions.set(state.key, state);
    }
  }

  /** The state of `key` (a fresh one when unknown). */
  get(key: string): SessionState {
    return this.#sessions.get(key) ?? { key, proactiveCount: 0, records: [] };
  }

  /** Applies `change` to the state of `key` and persists it (writes are serialised). */
  update(key: string, change: (state: SessionState) => SessionState): SessionState {
    const next = change(this.get(key));
    this.#sessions.set(key, next);
    const kvKey = this.#prefix + createHash('sha1').update(key, 'utf8').digest('hex');
    this.#writes = this.#writes
      .then(() => this.#kv.kvSet(kvKey, next))
      .then(
        () => undefined,
        (err: unknown) => this.#log.warn({ err }, 'session state not persisted'),
      );
    return next;
  }

  /** Adds a tracker record to `key`. */
  track(key: string, record: TrackerRecord): void {
    this.update(key, (s) => ({ ...s, records: addRecord(s.records, record, this.#clock.now()) }));
  }

  /** Forgets fingerprints and proactive counters of every session (end_all); tracker records stay. */
  resetTurns(): void {
    for (const key of [...this.#sessions.keys()]) {
      this.update(key, ({ consumedFingerprint: _c, proactiveFingerprint: _p, ...rest }) => ({
        ...rest,
        proactiveCount: 0,
      }));
    }
  }

  /** Forgets everything, in memory and in KV (`serve --fresh`). */
  async clear(): Promise<void> {
    await this.flush();
    this.#sessions.clear();
    for (const entry of await this.#kv.kvList(this.#prefix)) await this.#kv.kvDelete(entry.key);
  }

  /** Resolves once every write so far reached the store. */
  flush(): Promise<void> {
    return this.#writes;
  }
}
