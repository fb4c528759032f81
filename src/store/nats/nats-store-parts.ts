import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Clock } from '../../core/clock.js';
import { AvailableListeners } from '../available-listeners.js';
import { followedRecordApplier, JournalFollower } from './journal-follower.js';
import { journalNames, type JournalNames } from './journal-names.js';
import { ensureJournalStream } from './journal-stream.js';
import { JournalView } from './journal-view.js';
import { JournalWriter } from './journal-writer.js';
import { connectNats } from './nats-connection.js';
import { natsCall, storeUnavailable } from './nats-errors.js';
import { NatsKvSpace } from './nats-kv-space.js';
import { resolveReplicas, type NatsLocation } from './nats-location.js';
import { OwnWrites } from './own-writes.js';

/** How long opening waits for the journal follower to catch up with the stream. */
const CATCH_UP_TIMEOUT_MS = 30_000;

/** Everything a NatsStore owns once open; the store closes it. */
export interface NatsStoreParts {
  readonly nc: NatsConnection;
  readonly jsm: JetStreamManager;
  readonly names: JournalNames;
  readonly view: JournalView;
  readonly follower: JournalFollower;
  readonly kv: NatsKvSpace;
  /** Aborted by close(): ends follows, watches and waits. */
  readonly closer: AbortController;
  readonly listeners: AvailableListeners;
  readonly writer: JournalWriter;
  /** Replicas of the journal stream (as asked, or more when another hub raised it). */
  readonly replicas: number;
}

/**
 * Servers in the cluster the connection reached: the client URLs its INFO advertises (every server of
 * the cluster, this one included), at least 1.
 */
function clusterSize(nc: NatsConnection): number {
  return Math.max(1, new Set(nc.info?.connect_urls ?? []).size);
}

/**
 * Connects, creates the journal stream and KV bucket when missing, starts the journal follower and
 * waits until the view has caught up with the stream. On failure everything started is closed again
 * and STORE_UNAVAILABLE is thrown.
 */
export async function openNatsStoreParts(options: {
  readonly location: NatsLocation;
  readonly clock: Clock;
  readonly signal?: AbortSignal;
}): Promise<NatsStoreParts> {
  const { clock, location } = options;
  const nc = await connectNats(location, options.signal === undefined ? {} : { signal: options.signal });
  const closer = new AbortController();
  const cleanup: (() => void)[] = [];
  try {
    const names = journalNames(location.prefix);
    const jsm = await natsCall('connecting to JetStream', () => jetstreamManager(nc));
    const js = jetstream(nc);
    const replicas = resolveReplicas(location.replicas, clusterSize(nc));
    const journalReplicas = await ensureJournalStream(jsm, names, replicas);
    const kv = await NatsKvSpace.open(js, jsm, names.kvBucket, replicas, () => nc.getServer());
    cleanup.push(() => kv.close());
    const view = new JournalView();
    const listeners = new AvailableListeners();
    const onAvailable = (mailbox: string): void => listeners.notify(mailbox);
    const applyFollowed = followedRecordApplier({ names, view, clock, onAvailable });
    const ownWrites = new OwnWrites({ view, clock, applyFollowed });
    const closeSignal = closer.signal;
    const server = (): string => nc.getServer();
    const writer = new JournalWriter({ js, jsm, names, view, clock, ownWrites, closeSignal, server });
    const lastSeq = await writer.lastSeq();
    const follower = await JournalFollower.start({ js, names, onRecord: (msg) => ownWrites.deliver(msg) });
    cleanup.push(() => follower.close());
    await view.waitFollowed(lastSeq, { timeoutMs: CATCH_UP_TIMEOUT_MS, signal: closeSignal });
    return { nc, jsm, names, view, follower, kv, closer, listeners, writer, replicas: journalReplicas };
  } catch (err) {
    for (const step of cleanup) step();
    await nc.close().catch(() => undefined); // the open error is the one worth reporting
    throw storeUnavailable(err, 'opening the store');
  }
}
