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
 */
export class JournalFollower {
  readonly #options: FollowerOptions;
  #consumer: Consumer;
  #messages: ConsumerMessages;
  #resuming: Promise<void> = Promise.resolve();
  #isClosed = false;

  private constructor(options: FollowerOptions, consumer: Consumer, messages: ConsumerMessages) {
    this.#options = options;
    this.#consumer = consumer;
    this.#messages = messages;
  }

  /** Starts following; resolves once the consumer exists (the caller waits for the catch-up). */
  static async start(options: FollowerOptions): Promise<JournalFollower> {
    const [consumer, messages] = await follow(options, { deliver_policy: DeliverPolicy.LastPerSubject });
    return new JournalFollower(options, consumer, messages);
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
    stop(this.#consumer, this.#messages);
  }
}

/** What a follower reads and where it hands records. */
interface FollowerOptions {
  readonly js: JetStreamClient;
  readonly names: JournalNames;
  readonly onRecord: (msg: JsMsg) => void;
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
