import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { KvState } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { addRecord, trackerRecordSchema, type TrackerRecord } from './task-tracker.js';
import { SerialQueue } from '../../core/serial-queue.js';

const turnStateSchema = z.object({
  key: z.string(),
  consumedFingerprint: z.string().optional(),
  proactiveFingerprint: z.string().optional(),
  proactiveCount: z.number().int().nonnegative(),
});
const storedRecordSchema = z.object({ key: z.string(), record: trackerRecordSchema });

/** What the executor remembers per session key. */
export interface SessionState extends z.infer<typeof turnStateSchema> {
  readonly records: readonly TrackerRecord[];
}

type TurnState = z.infer<typeof turnStateSchema>;

function turnOf(state: SessionState): TurnState {
  const { records: _records, ...turn } = state;
  return turn;
}

function isSameTurn(a: SessionState, b: SessionState): boolean {
  return (
    a.consumedFingerprint === b.consumedFingerprint &&
    a.proactiveFingerprint === b.proactiveFingerprint &&
    a.proactiveCount === b.proactiveCount
  );
}

/**
 * Per-session memory of the executor: the last consumed user-turn fingerprint, the proactive
 * fingerprint and counter, and the tracker records. Kept in memory and written through to KV so a
 * restart keeps it: `<prefix><sha1 of the key>/turn` for the fingerprints and one small row
 * `<prefix><sha1>/records/<task id>` per tracker record (a task's records replace each other), so a
 * change writes only what changed. Writes are serialised; changes made while a write is pending are
 * coalesced.
 */
export class SessionMemory {
  readonly #kv: KvState;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #prefix: string;
  readonly #sessions = new Map<string, SessionState>();
  /** KV rows to write (a value) or delete (undefined) at the next flush. */
  readonly #pending = new Map<string, unknown>();
  readonly #writes = new SerialQueue();

  constructor(options: { kv: KvState; clock: Clock; logger: Logger; prefix: string }) {
    this.#kv = options.kv;
    this.#clock = options.clock;
    this.#log = options.logger;
    this.#prefix = options.prefix;
  }

  /** Reads every persisted session (call once at start). */
  async load(): Promise<void> {
    const turns = new Map<string, TurnState>();
    const records = new Map<string, TrackerRecord[]>();
    for (const entry of await this.#kv.kvList(this.#prefix)) {
      const turn = turnStateSchema.safeParse(entry.value);
      if (entry.key.endsWith('/turn') && turn.success) turns.set(turn.data.key, turn.data);
      const stored = storedRecordSchema.safeParse(entry.value);
      if (entry.key.includes('/records/') && stored.success) {
        records.set(stored.data.key, [...(records.get(stored.data.key) ?? []), stored.data.record]);
      }
    }
    for (const key of new Set([...turns.keys(), ...records.keys()])) {
      const list = (records.get(key) ?? []).sort((a, b) => a.ts - b.ts);
      this.#sessions.set(key, { ...(turns.get(key) ?? { key, proactiveCount: 0 }), records: list });
    }
  }

  /** The state of `key` (a fresh one when unknown). */
  get(key: string): SessionState {
    return this.#sessions.get(key) ?? { key, proactiveCount: 0, records: [] };
  }

  /** Applies `change` to the state of `key` and persists what changed. */
  update(key: string, change: (state: SessionState) => SessionState): SessionState {
    const before = this.get(key);
    const next = change(before);
    this.#sessions.set(key, next);
    const base = this.#prefix + createHash('sha1').update(key, 'utf8').digest('hex');
    if (!isSameTurn(before, next)) this.#queue(`${base}/turn`, turnOf(next));
    for (const record of before.records) {
      if (!next.records.some((r) => r.taskId === record.taskId))
        this.#queue(`${base}/records/${record.taskId}`, undefined);
    }
    for (const record of next.records.filter((r) => !before.records.includes(r))) {
      this.#queue(`${base}/records/${record.taskId}`, { key, record });
    }
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
    return this.#writes.idle();
  }

  #queue(kvKey: string, value: unknown): void {
    const isFlushQueued = this.#pending.size > 0;
    this.#pending.set(kvKey, value);
    if (!isFlushQueued) void this.#writes.run(() => this.#writePending());
  }

  async #writePending(): Promise<void> {
    const batch = [...this.#pending];
    this.#pending.clear();
    for (const [kvKey, value] of batch) {
      const write = value === undefined ? this.#kv.kvDelete(kvKey) : this.#kv.kvSet(kvKey, value);
      await write.then(
        () => undefined,
        (err: unknown) => this.#log.warn({ err }, 'session state not persisted'),
      );
    }
  }
}
