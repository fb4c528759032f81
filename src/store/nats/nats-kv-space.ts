import { headers, type QueuedIterator } from '@nats-io/transport-node';
import {
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { Kvm, KvWatchInclude, type KV, type KvEntry as NatsKvEntry, type KvWatchEntry } from '@nats-io/kv';
import { MusubiError } from '../../core/errors.js';
import { kvValueText } from '../kv-write.js';
import type { KvChange, KvEntry, KvWriteOptions } from '../store.js';
import { tookEffect, type ConditionalWrites } from './conditional-write.js';
import {
  isWrongLastSequence,
  natsCall,
  storeUnavailable,
  streamUnavailable,
  type StreamDiagnosis,
} from './nats-errors.js';
import { raiseReplicas, withReplicaHint } from './journal-stream.js';
import { readStream } from './stream-reader.js';
import { untilAborted } from './until-aborted.js';

/** Revisions of one key kept for watches that replay from an older revision (the JetStream maximum). */
const KV_HISTORY = 64;

/** The subject filter that narrows a key-prefix scan to whole dot-separated tokens. */
function filterFor(prefix: string): string {
  const whole = prefix.split('.').slice(0, -1);
  return whole.length === 0 ? '>' : `${whole.join('.')}.>`;
}

function parseValue(key: string, text: string, revision: number): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new MusubiError('STORE_CORRUPT', `kv key ${key} at revision ${revision} is not JSON`, {
      cause: err,
    });
  }
}

function isPut(entry: NatsKvEntry): boolean {
  return entry.operation === 'PUT';
}

function changeOf(entry: KvWatchEntry): KvChange {
  const { key, revision } = entry;
  return isPut(entry)
    ? { op: 'put', key, value: parseValue(key, entry.string(), revision), revision }
    : { op: 'delete', key, value: undefined, revision };
}

/**
 * The key-value state of the NATS store: a JetStream KV bucket. Revisions are the bucket stream's
 * sequences, so they strictly increase across keys; compare-and-set uses the KV's expected-revision
 * writes. The store tracks the newest revision it has seen (its own writes plus a headers-only watch)
 * so a watch without `afterRevision` starts after everything known when it was called.
 */
export class NatsKvSpace {
  readonly #kv: KV;
  readonly #js: JetStreamClient;
  readonly #bucket: string;
  readonly #tracker: QueuedIterator<NatsKvEntry>;
  readonly #diagnosis: StreamDiagnosis;
  /** The bucket's stream and how its conditional writes are checked. */
  readonly #writes: ConditionalWrites;
  #latest: number;

  private constructor(parts: {
    kv: KV;
    js: JetStreamClient;
    bucket: string;
    tracker: QueuedIterator<NatsKvEntry>;
    latest: number;
    diagnosis: StreamDiagnosis;
    writes: ConditionalWrites;
  }) {
    this.#writes = parts.writes;
    this.#kv = parts.kv;
    this.#js = parts.js;
    this.#diagnosis = parts.diagnosis;
    this.#bucket = parts.bucket;
    this.#tracker = parts.tracker;
    this.#latest = parts.latest;
    void this.#track();
  }

  /**
   * Creates or opens the bucket with `replicas` copies, raising an existing bucket that has fewer.
   * Rejects with STORE_UNAVAILABLE when NATS fails.
   */
  static async open(
    js: JetStreamClient,
    jsm: JetStreamManager,
    bucket: string,
    replicas: number,
    options: { readonly diagnosis: StreamDiagnosis; readonly isReplicated: boolean },
  ): Promise<NatsKvSpace> {
    return natsCall('opening the KV bucket', async () => {
      const kvm = new Kvm(js);
      const stream = `KV_${bucket}`;
      // An existing bucket is opened (kvm.create would refuse a different replica count) and raised.
      const exists = await raiseReplicas(jsm, stream, replicas).then(
        () => true,
        (err: unknown) =>
          err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound
            ? false
            : Promise.reject(err),
      );
      // Two hubs creating the bucket at once: the loser's create fails on the server (nats-server 2.9
      // says the subjects overlap), and the bucket the winner made is opened instead.
      const create = (): Promise<KV> =>
        withReplicaHint(replicas, `the KV bucket ${bucket}`, () =>
          kvm.create(bucket, { history: KV_HISTORY, replicas }),
        );
      const kv = exists
        ? await kvm.open(bucket)
        : await create().catch(async (err: unknown) => {
            const isThere = await raiseReplicas(jsm, stream, replicas).then(
              () => true,
              () => false,
            );
            if (!isThere) throw err;
            return kvm.open(bucket);
          });
      const latest = (await kv.status()).streamInfo.state.last_seq;
      const tracker = await kv.watch({ include: KvWatchInclude.UpdatesOnly, headers_only: true });
      const writes = { js, jsm, stream, isReplicated: options.isReplicated };
      return new NatsKvSpace({ kv, js, bucket, tracker, latest, diagnosis: options.diagnosis, writes });
    });
  }

  async get(key: string): Promise<KvEntry | null> {
    const entry = await natsCall('reading a key', () => this.#kv.get(key));
    if (entry === null || !isPut(entry)) return null;
    this.#saw(entry.revision);
    return { key, value: parseValue(key, entry.string(), entry.revision), revision: entry.revision };
  }

  async set(key: string, value: unknown, options?: KvWriteOptions): Promise<KvEntry> {
    const text = kvValueText(value);
    const expected = options?.expectedRevision;
    let revision: number;
    // The revision a write expected when it lost a race the server let through (conditional-write.ts).
    let lostExpecting: number | undefined;
    try {
      if (expected === undefined) revision = await this.#kv.put(key, text);
      else {
        const written = await this.#putAt(key, text, expected);
        revision = written.revision;
        if (!(await this.#tookEffect(key, written.expected, revision))) lostExpecting = expected;
      }
    } catch (err) {
      if (expected !== undefined && isWrongLastSequence(err)) throw await this.#conflict(key, expected);
      throw await this.#unavailable(err, 'writing a key');
    }
    this.#saw(revision);
    if (lostExpecting !== undefined) throw await this.#conflict(key, lostExpecting);
    return { key, value: JSON.parse(text) as unknown, revision };
  }

  async delete(key: string, options?: KvWriteOptions): Promise<void> {
    const expected = options?.expectedRevision;
    if (expected === undefined || expected === 0) {
      const current = await this.get(key);
      if (current === null) return;
      if (expected === 0) throw await this.#conflict(key, 0);
    }
    let lostExpecting: number | undefined;
    // A raw delete marker (what kv.delete writes) so the new revision is known.
    const h = headers();
    h.set('KV-Operation', 'DEL');
    try {
      const ack = await this.#js.publish(`$KV.${this.#bucket}.${key}`, undefined, {
        headers: h,
        ...(expected === undefined || expected === 0 ? {} : { expect: { lastSubjectSequence: expected } }),
      });
      this.#saw(ack.seq);
      if (expected !== undefined && expected !== 0 && !(await this.#tookEffect(key, expected, ack.seq))) {
        lostExpecting = expected;
      }
    } catch (err) {
      if (expected !== undefined && isWrongLastSequence(err)) throw await this.#conflict(key, expected);
      throw await this.#unavailable(err, 'deleting a key');
    }
    if (lostExpecting !== undefined) throw await this.#conflict(key, lostExpecting);
  }

  /**
   * Writes `text` under `key` if it is at revision `expected` (0: absent, which a deleted key counts
   * as, as in kv.create); resolves the new revision and the revision the write really expected.
   */
  async #putAt(key: string, text: string, expected: number): Promise<{ revision: number; expected: number }> {
    if (expected !== 0)
      return { revision: await this.#kv.put(key, text, { previousSeq: expected }), expected };
    try {
      return { revision: await this.#kv.put(key, text, { previousSeq: 0 }), expected: 0 };
    } catch (err) {
      if (!isWrongLastSequence(err)) throw err;
      const current = await this.#kv.get(key);
      if (current === null || isPut(current)) throw err;
      const revision = await this.#kv.put(key, text, { previousSeq: current.revision });
      return { revision, expected: current.revision };
    }
  }

  /** False when a conditional write lost a race the server let through (see conditional-write.ts). */
  #tookEffect(key: string, expected: number, seq: number): Promise<boolean> {
    const write = { subject: `$KV.${this.#bucket}.${key}`, expected, seq };
    return tookEffect(this.#writes, write, (winner) => ({ data: winner.data, headers: winner.header }));
  }

  /** A failed write's error; an unanswered one says whether the bucket's stream itself is unavailable. */
  #unavailable(err: unknown, doing: string): Promise<Error> {
    return streamUnavailable(err, doing, this.#writes.stream, this.#diagnosis);
  }

  async list(prefix: string): Promise<KvEntry[]> {
    const head = `$KV.${this.#bucket}.`;
    const messages = await readStream(this.#js, {
      stream: `KV_${this.#bucket}`,
      start: { lastPerSubject: true },
      filter: `${head}${filterFor(prefix)}`,
    });
    const entries: KvEntry[] = [];
    for (const msg of messages) {
      const key = msg.subject.slice(head.length);
      const op = msg.headers?.get('KV-Operation') ?? '';
      if (op !== '' || !key.startsWith(prefix)) continue;
      this.#saw(msg.seq);
      entries.push({ key, value: parseValue(key, msg.string(), msg.seq), revision: msg.seq });
    }
    return entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** The revision a watch without `afterRevision` starts after (read when kvWatch is called). */
  get latestRevision(): number {
    return this.#latest;
  }

  /** Changes to keys under `prefix` after revision `after` until `stop` aborts; then it ends. */
  async *watch(prefix: string, after: number, stop: AbortSignal): AsyncGenerator<KvChange, void, undefined> {
    if (stop.aborted) return;
    let iter: QueuedIterator<KvWatchEntry> | undefined;
    const end = (): void => iter?.stop();
    stop.addEventListener('abort', end, { once: true });
    try {
      // Closing the connection does not fail requests in flight at once, so the start races the signal.
      const started = await untilAborted(
        this.#kv.watch({ key: filterFor(prefix), resumeFromRevision: after + 1 }),
        stop,
        (late) => late.stop(),
      );
      if (started === null) return;
      iter = started.value;
      for await (const entry of iter) {
        if (stop.aborted) return;
        if (!entry.key.startsWith(prefix)) continue;
        this.#saw(entry.revision);
        yield changeOf(entry);
      }
    } catch (err) {
      // Closing the store closes the connection under a watch; that ends it quietly.
      if (!stop.aborted) throw storeUnavailable(err, 'watching keys');
    } finally {
      stop.removeEventListener('abort', end);
      iter?.stop();
    }
  }

  /** Stops the revision tracker. Idempotent. */
  close(): void {
    this.#tracker.stop();
  }

  async #conflict(key: string, expected: number): Promise<MusubiError> {
    const current = await this.get(key).catch(() => null);
    const revision = current?.revision ?? 0;
    return new MusubiError('STORE_CONFLICT', `key ${key} is at revision ${revision}, expected ${expected}`, {
      details: { key, expectedRevision: expected, revision },
    });
  }

  #saw(revision: number): void {
    if (revision > this.#latest) this.#latest = revision;
  }

  async #track(): Promise<void> {
    try {
      for await (const entry of this.#tracker) this.#saw(entry.revision);
    } catch {
      // The tracker only sharpens where new watches start; losing it (connection closed) is harmless.
    }
  }
}
