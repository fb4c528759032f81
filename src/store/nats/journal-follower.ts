import {
  DeliverPolicy,
  type Consumer,
  type ConsumerMessages,
  type JetStreamClient,
  type JsMsg,
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
 * subject, then every new record in stream order, handing each to `onRecord`. Reconnects are handled
 * by the ordered consumer, which resumes after the last sequence it delivered.
 */
export class JournalFollower {
  readonly #consumer: Consumer;
  readonly #messages: ConsumerMessages;

  private constructor(consumer: Consumer, messages: ConsumerMessages) {
    this.#consumer = consumer;
    this.#messages = messages;
  }

  /** Starts following; resolves once the consumer exists (the caller waits for the catch-up). */
  static async start(options: {
    readonly js: JetStreamClient;
    readonly names: JournalNames;
    readonly onRecord: (msg: JsMsg) => void;
  }): Promise<JournalFollower> {
    const { js, names, onRecord } = options;
    const consumer = await natsCall('following the journal', () =>
      js.consumers.get(names.stream, { deliver_policy: DeliverPolicy.LastPerSubject }),
    );
    const messages = await natsCall('following the journal', () =>
      consumer.consume({ max_messages: FOLLOW_BATCH, expires: PULL_EXPIRES_MS, callback: onRecord }),
    );
    return new JournalFollower(consumer, messages);
  }

  /** Stops following and drops the server-side consumer. Idempotent. */
  close(): void {
    this.#messages.stop();
    // Ordered consumers are ephemeral; if this delete is lost the server drops them when idle.
    this.#consumer.delete().catch(() => undefined);
  }
}
