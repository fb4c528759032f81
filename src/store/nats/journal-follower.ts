import {
  DeliverPolicy,
  type Consumer,
  type ConsumerMessages,
  type JetStreamClient,
  type JsMsg,
  type OrderedConsumerOptions,
} from '@nats-io/jetstream';
import type { Clock } from '../../core/clock.js';
import { parseJournalRecord } from './journal-record.js';
import type { JournalNames } from './journal-names.js';
import type { JournalView } from './journal-view.js';
import { natsCall } from './nats-errors.js';

/** Messages asked for per pull; the follower sees every record of the bus, so it pulls in bulk. */
const FOLLOW_BATCH = 1_024;
/**
 * Lifetime of one pull request. The client also waits this long between attempts to re-find its
 * consumer after a reconnect (while a restarted server brings JetStream back), so it bounds how long
 * the view lags after an outage.
 */
const PULL_EXPIRES_MS = 2_000;
/**
 * How often the follower checks that it keeps up: when its consumer handed over nothing since the last
 * check but has records pending (or is gone), it resumes with a new one (see JournalFollower).
 */
export const PROGRESS_CHECK_MS = 2_000;

/** What the follower needs to apply a record to the view. */
export interface FollowedRecordOptions {
  readonly names: JournalNames;
  readonly view: JournalView;
  readonly clock: Clock;
  /** Called with the mailbox when another process's write may make a message claimable (now or later). */
  readonly onAvailable: (mailbox: string) => void;
}

/**
 * Builds the function that applies one followed record to the view: records already known (this
 * process's own writes) are skipped without parsing; a record that fails its schema is skipped (the
 * view then lacks that message until a later record or a compare-and-set refresh replaces it).
 */
export function followedRecordApplier(options: FollowedRecordOptions): (msg: JsMsg) => void {
  const { view, names } = options;
  return (msg) => {
    const seq = msg.seq;
    if (msg.subject === names.eventSubject || seq <= view.revisionOf(msg.subject)) return;
    try {
      const record = parseJournalRecord(msg.string(), seq);
      const entry = view.apply(msg.subject, seq, record, { now: options.clock.now(), isFetched: false });
      // Leased and delayed ones too: a waiting receive then re-reads nextDueAt, so a lease taken by a
      // hub that dies is redelivered here when it ends, not when the receive times out.
      if (entry != null && entry.record.op !== 'dead') options.onAvailable(entry.record.mailbox);
    } catch {
      // A corrupt record must not stop the follower; readEvents skips it too (never used).
    }
  };
}

/**
 * Follows the whole journal with an ordered consumer that first delivers the newest record of every
 * subject, then every new record in stream order, handing each to `onRecord`. The ordered consumer
 * survives reconnects by itself, but only after its heartbeats are missed and its consumer looked up
 * again (3-4 s after a partition heals, measured); {@link JournalFollower.resume} replaces it at once.
 * Nor does it always recover when the server leading the journal dies under it without a reconnect:
 * in one run of the multi-host suite neither consumer hub followed a record for 60 s after the leader
 * was SIGKILLed. So every {@link PROGRESS_CHECK_MS} without a record handed over, the follower asks
 * the server about its consumer, and resumes when records are pending there or the consumer is gone.
 */
export class JournalFollower {
  readonly #options: FollowerOptions;
  #consumer: Consumer;
  #messages: ConsumerMessages;
  #resuming: Promise<void> = Promise.resolve();
  #isClosed = false;
  readonly #progressTimer: NodeJS.Timeout;
  /** The newest record a consumer handed over, and its value at the last progress check. */
  readonly #delivered: { seq: number };
  #deliveredAtCheck = -1;

  private constructor(
    options: FollowerOptions,
    delivered: { seq: number },
    consumer: Consumer,
    messages: ConsumerMessages,
  ) {
    this.#options = options;
    this.#delivered = delivered;
    this.#consumer = consumer;
    this.#messages = messages;
    this.#progressTimer = setInterval(() => void this.#checkProgress(), PROGRESS_CHECK_MS);
    this.#progressTimer.unref();
  }

  /** Starts following; resolves once the consumer exists (the caller waits for the catch-up). */
  static async start(options: FollowerOptions): Promise<JournalFollower> {
    const delivered = { seq: 0 };
    const counted: FollowerOptions = {
      ...options,
      onRecord: (msg) => {
        delivered.seq = Math.max(delivered.seq, msg.seq);
        options.onRecord(msg);
      },
    };
    const [consumer, messages] = await follow(counted, { deliver_policy: DeliverPolicy.LastPerSubject });
    return new JournalFollower(counted, delivered, consumer, messages);
  }

  /**
   * Follows on with a new consumer from the record after `afterSeq` (what the view has seen), then
   * drops the old one; records both deliver are skipped by the view. Called after a reconnect. When
   * the new consumer cannot be made yet the old one goes on recovering by itself.
   */
  resume(afterSeq: number): Promise<void> {
    this.#resuming = this.#resuming.then(async () => {
      if (this.#isClosed) return;
      const next = await follow(this.#options, {
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: afterSeq + 1,
      }).catch(() => null);
      if (next === null) return;
      if (this.#isClosed) return stop(next[0], next[1]);
      stop(this.#consumer, this.#messages);
      [this.#consumer, this.#messages] = next;
    });
    return this.#resuming;
  }

  /** Stops following and drops the server-side consumer. Idempotent. */
  close(): void {
    this.#isClosed = true;
    clearInterval(this.#progressTimer);
    stop(this.#consumer, this.#messages);
  }

  /**
   * Resumes (after what the view has followed) when the consumer handed over nothing since the last
   * check and either has records pending on the server or cannot be found there. (The consumer's
   * pending count, not the stream's last sequence: a purge may have removed the newest records.)
   */
  async #checkProgress(): Promise<void> {
    const delivered = this.#delivered.seq;
    const isStill = delivered === this.#deliveredAtCheck;
    this.#deliveredAtCheck = delivered;
    if (!isStill || this.#isClosed) return;
    const consumer = this.#consumer;
    const pending = await consumer.info().then(
      (info) => info.num_pending,
      () => Number.POSITIVE_INFINITY,
    );
    if (pending === 0 || this.#isClosed || consumer !== this.#consumer || this.#delivered.seq !== delivered) {
      return;
    }
    await this.resume(this.#options.followedSeq());
  }
}

/** What a follower reads and where it hands records. */
interface FollowerOptions {
  readonly js: JetStreamClient;
  readonly names: JournalNames;
  readonly onRecord: (msg: JsMsg) => void;
  /** What the view has followed: where a resume starts. */
  readonly followedSeq: () => number;
}

async function follow(
  options: FollowerOptions,
  start: Partial<OrderedConsumerOptions>,
): Promise<[Consumer, ConsumerMessages]> {
  const { js, names, onRecord } = options;
  const consumer = await natsCall('following the journal', () => js.consumers.get(names.stream, start));
  const messages = await natsCall('following the journal', () =>
    consumer.consume({ max_messages: FOLLOW_BATCH, expires: PULL_EXPIRES_MS, callback: onRecord }),
  );
  return [consumer, messages];
}

function stop(consumer: Consumer, messages: ConsumerMessages): void {
  messages.stop();
  // Ordered consumers are ephemeral; if this delete is lost the server drops them when idle.
  consumer.delete().catch(() => undefined);
}
