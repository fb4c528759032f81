import type { JetStreamClient, JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import type { Clock } from '../../core/clock.js';
import { tookEffect, type ConditionalWrites } from './conditional-write.js';
import { isMessageRecord, parseJournalRecord, type JournalRecord } from './journal-record.js';
import { parseMessageSubject, type JournalNames } from './journal-names.js';
import type { JournalView } from './journal-view.js';
import type { MessageEntry } from './mailbox-view.js';
import type { FollowedMessage, OwnWrites } from './own-writes.js';
import { isWrongLastSequence, natsCall, streamUnavailable, type StreamDiagnosis } from './nats-errors.js';

/** How long a read waits for the follower to reach the journal's end before STORE_UNAVAILABLE. */
const SYNC_TIMEOUT_MS = 10_000;

/** Collaborators of {@link JournalWriter}. */
export interface JournalWriterOptions {
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly names: JournalNames;
  readonly view: JournalView;
  readonly clock: Clock;
  /** Only starting and ending writes; the follower feeds the rest. */
  readonly ownWrites: Pick<OwnWrites<FollowedMessage>, 'begin' | 'end'>;
  /** Aborts when the store closes, ending any wait. */
  readonly closeSignal: AbortSignal;
  /** Looks into the journal stream when a write goes unanswered. */
  readonly diagnosis: StreamDiagnosis;
  /** The journal has, or may come to have, several replicas: conditional writes are checked (conditional-write.ts). */
  readonly isReplicated: boolean;
}

const encoder = new TextEncoder();

/**
 * The bytes that restore `winner` as the newest record of its subject: the same record, except that
 * one which takes its place in line from its own sequence (`sent`, `requeued`) keeps the winner's.
 */
function restoreOf(winner: StoredMsg): { data: Uint8Array } {
  const record = parseJournalRecord(winner.string(), winner.seq);
  if (!isMessageRecord(record) || record.position !== undefined) return { data: winner.data };
  return { data: encoder.encode(JSON.stringify({ ...record, position: winner.seq })) };
}

/**
 * Conditional writes and fresh reads of message subjects. A write names the stream sequence it
 * expects to be the subject's newest record (`Nats-Expected-Last-Subject-Sequence`); JetStream stores
 * it only if that still holds, which makes every message change a compare-and-set.
 */
export class JournalWriter {
  readonly #o: JournalWriterOptions;

  readonly #writes: ConditionalWrites;

  constructor(options: JournalWriterOptions) {
    this.#o = options;
    const { js, jsm, names, isReplicated } = options;
    this.#writes = { js, jsm, stream: names.stream, isReplicated };
  }

  /**
   * Stores `record` on `subject` if the subject's newest record is still `expectedRevision` (0: the
   * subject holds nothing). Resolves the new sequence (applied to the view), or `conflict`.
   */
  async write(
    subject: string,
    record: JournalRecord,
    expectedRevision: number,
  ): Promise<number | 'conflict'> {
    // Without a msgId the server has nothing to call a duplicate.
    const written = await this.#write(subject, record, expectedRevision, undefined);
    return typeof written === 'object' ? 'conflict' : written;
  }

  /**
   * Like {@link JournalWriter.write}, and the server also drops the record when it has stored one
   * with the same `msgId` in the last two minutes (JetStream's duplicate window): resolves
   * `{ duplicateOf }`, the sequence of that record, then. A retry of a write whose reply was lost
   * passes the msgId of the first try, so it cannot store the record twice.
   */
  async writeOnce(
    subject: string,
    record: JournalRecord,
    expectedRevision: number,
    msgId: string,
  ): Promise<number | 'conflict' | { readonly duplicateOf: number }> {
    return this.#write(subject, record, expectedRevision, msgId);
  }

  async #write(
    subject: string,
    record: JournalRecord,
    expectedRevision: number,
    msgId: string | undefined,
  ): Promise<number | 'conflict' | { readonly duplicateOf: number }> {
    const { js, ownWrites, view, clock } = this.#o;
    ownWrites.begin(subject);
    let seq: number;
    try {
      const ack = await js.publish(subject, JSON.stringify(record), {
        expect: { lastSubjectSequence: expectedRevision },
        ...(msgId === undefined ? {} : { msgID: msgId }),
      });
      if (ack.duplicate) {
        ownWrites.end(subject, null);
        return { duplicateOf: ack.seq };
      }
      seq = ack.seq;
      const write = { subject, expected: expectedRevision, seq };
      if (!(await tookEffect(this.#writes, write, restoreOf))) {
        ownWrites.end(subject, null);
        return 'conflict';
      }
    } catch (err) {
      ownWrites.end(subject, null);
      if (isWrongLastSequence(err)) return 'conflict';
      throw await this.#unavailable(err, 'writing a message record');
    }
    if (!ownWrites.end(subject, { seq, record })) {
      view.apply(subject, seq, record, { now: clock.now(), isFetched: true });
    }
    return seq;
  }

  /** Appends a record that needs no condition (an event from a higher layer); resolves its sequence. */
  async append(subject: string, record: JournalRecord): Promise<number> {
    try {
      return (await this.#o.js.publish(subject, JSON.stringify(record))).seq;
    } catch (err) {
      throw await this.#unavailable(err, 'appending an event');
    }
  }

  /** A failed write's error; an unanswered one says whether the journal stream itself is unavailable. */
  #unavailable(err: unknown, doing: string): Promise<Error> {
    return streamUnavailable(err, doing, this.#o.names.stream, this.#o.diagnosis);
  }

  /**
   * Reads the newest record of `subject` from the server into the view and resolves the view's entry
   * for that message afterwards (undefined when it is acked or gone).
   */
  async refresh(subject: string): Promise<MessageEntry | undefined> {
    return (await this.refreshRevision(subject)).entry;
  }

  /**
   * Like {@link JournalWriter.refresh}, plus the sequence of the newest record read (0 when the subject
   * holds none). With no entry that is the revision a new message under an acked id must expect: the
   * view forgets an ack's revision once the follower has passed it.
   */
  async refreshRevision(subject: string): Promise<{ entry: MessageEntry | undefined; revision: number }> {
    const { names, view, clock } = this.#o;
    const followedAtStart = view.followedSeq;
    const stored = await this.#readNewest(subject);
    const parts = parseMessageSubject(names, subject);
    if (stored === null) {
      // Gone from the server (trimmed); unless the follower brought something newer meanwhile.
      if (parts !== null && view.revisionOf(subject) <= followedAtStart) {
        view.forget(subject, parts.mailbox, parts.envelopeId);
      }
      return { entry: undefined, revision: 0 };
    }
    const record = parseJournalRecord(stored.string(), stored.seq);
    view.apply(subject, stored.seq, record, { now: clock.now(), isFetched: true });
    const entry = parts === null ? undefined : view.entry(parts.mailbox, parts.envelopeId);
    return { entry, revision: stored.seq };
  }

  /** The newest record of `subject` on the server (undefined when it holds none), without applying it. */
  async newestRecord(subject: string): Promise<JournalRecord | undefined> {
    const stored = await this.#readNewest(subject);
    return stored === null ? undefined : parseJournalRecord(stored.string(), stored.seq);
  }

  /** The newest stored message of `subject`, read from the stream leader (null when it holds none). */
  #readNewest(subject: string): Promise<StoredMsg | null> {
    const { jsm, names } = this.#o;
    return natsCall('reading a message record', () =>
      jsm.streams.getMessage(names.stream, { last_by_subj: subject }),
    );
  }

  /** The newest record of every subject matching `filter` (a wildcard), read from the server. */
  async refreshAll(filter: string): Promise<MessageEntry[]> {
    const { jsm, names } = this.#o;
    const info = await natsCall('listing message subjects', () =>
      jsm.streams.info(names.stream, { subjects_filter: filter }),
    );
    const entries: MessageEntry[] = [];
    for (const subject of Object.keys(info.state.subjects ?? {})) {
      const entry = await this.refresh(subject);
      if (entry !== undefined) entries.push(entry);
    }
    return entries;
  }

  /**
   * Waits until the follower has delivered every record stored before this call, so the view includes
   * writes by other processes that completed earlier (read-your-writes across hubs).
   */
  async sync(): Promise<void> {
    const { jsm, names, view } = this.#o;
    const info = await natsCall('reading the journal state', () => jsm.streams.info(names.stream));
    await view.waitFollowed(info.state.last_seq, {
      timeoutMs: SYNC_TIMEOUT_MS,
      signal: this.#o.closeSignal,
    });
  }

  /** The sequence of the newest journal record, 0 when the journal is empty. */
  async lastSeq(): Promise<number> {
    const { jsm, names } = this.#o;
    const info = await natsCall('reading the journal state', () => jsm.streams.info(names.stream));
    return info.state.last_seq;
  }
}
