import {
  DeliverPolicy,
  type Consumer,
  type ConsumerMessages,
  type JetStreamClient,
  type JsMsg,
  type OrderedConsumerOptions,
} from '@nats-io/jetstream';
import { natsCall } from './nats-errors.js';
import { untilAborted } from './until-aborted.js';

/** Messages asked for per pull while reading or following a stream. */
const PULL_BATCH = 512;
/** Lifetime of one pull request; also the retry interval after a reconnect (see journal-follower.ts). */
const PULL_EXPIRES_MS = 2_000;

/** Where a read starts: after a sequence, or with the newest message of every subject. */
export type ReadStart = { readonly afterSeq: number } | { readonly lastPerSubject: true };

/** Which messages of a stream to read. */
export interface StreamSelection {
  readonly stream: string;
  readonly start: ReadStart;
  /** Subject filter (wildcards allowed); every subject when absent. */
  readonly filter?: string;
  /** Deliver subjects and headers without payloads. */
  readonly headersOnly?: boolean;
}

function orderedConsumer(js: JetStreamClient, selection: StreamSelection): Promise<Consumer> {
  const { start, filter } = selection;
  const options: Partial<OrderedConsumerOptions> = {
    ...('afterSeq' in start
      ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start.afterSeq + 1 }
      : { deliver_policy: DeliverPolicy.LastPerSubject }),
    ...(filter === undefined ? {} : { filter_subjects: filter }),
    ...(selection.headersOnly === true ? { headers_only: true } : {}),
  };
  return natsCall('opening a stream reader', () => js.consumers.get(selection.stream, options));
}

function dropConsumer(consumer: Consumer): void {
  // Ordered consumers are ephemeral; if this delete is lost the server drops them when idle.
  consumer.delete().catch(() => undefined);
}

/**
 * Reads up to `limit` messages of a stream selection, oldest first, as the stream holds them when the
 * read starts (later messages are not waited for). Rejects with STORE_UNAVAILABLE when NATS fails.
 */
export async function readStream(
  js: JetStreamClient,
  selection: StreamSelection,
  limit = Infinity,
): Promise<JsMsg[]> {
  if (limit <= 0) return [];
  const consumer = await orderedConsumer(js, selection);
  try {
    const wanted = Math.min(limit, (await consumer.info(true)).num_pending);
    if (wanted === 0) return [];
    const messages = await natsCall('reading a stream', () =>
      consumer.consume({ max_messages: Math.min(wanted, PULL_BATCH) }),
    );
    const read: JsMsg[] = [];
    try {
      for await (const msg of messages) {
        read.push(msg);
        if (read.length >= wanted || msg.info.pending === 0) break;
      }
    } finally {
      messages.stop();
    }
    return read;
  } finally {
    dropConsumer(consumer);
  }
}

/**
 * Yields the messages of a stream selection, then each new one as it is stored, until `signal` aborts;
 * then it ends without throwing. Survives reconnects: the ordered consumer resumes after the last
 * sequence it delivered.
 */
export async function* followStream(
  js: JetStreamClient,
  selection: StreamSelection,
  signal: AbortSignal,
): AsyncGenerator<JsMsg, void, undefined> {
  if (signal.aborted) return;
  // Closing the connection does not fail requests in flight at once, so waits race the signal.
  const created = await untilAborted(orderedConsumer(js, selection), signal, dropConsumer);
  if (created === null) return;
  const consumer = created.value;
  let messages: ConsumerMessages | undefined;
  const stop = (): void => messages?.stop();
  signal.addEventListener('abort', stop, { once: true });
  try {
    const started = await untilAborted(
      natsCall('following a stream', () =>
        consumer.consume({ max_messages: PULL_BATCH, expires: PULL_EXPIRES_MS }),
      ),
      signal,
      (late) => late.stop(),
    );
    if (started === null) return;
    messages = started.value;
    for await (const msg of messages) {
      if (signal.aborted) return;
      yield msg;
    }
  } finally {
    signal.removeEventListener('abort', stop);
    messages?.stop();
    dropConsumer(consumer);
  }
}
