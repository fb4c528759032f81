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
import {
  DIAGNOSIS_REQUEST_MS,
  natsCall,
  storeUnavailable,
  untilAnswered,
  type StreamDiagnosis,
} from './nats-errors.js';
import { NatsKvSpace } from './nats-kv-space.js';
import { resolveReplicas, type NatsLocation } from './nats-location.js';
import { OwnWrites } from './own-writes.js';
import { ServerClock } from './server-clock.js';

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
  /** The server's time, on which every lease and delay is decided; the store closes it. */
  readonly clock: ServerClock;
}

/** How long a first write waits for a stream just created in a cluster to take writes. */
const NEW_STREAM_READY_MS = 5_000;

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
  readonly isClockTrusted?: boolean;
}): Promise<NatsStoreParts> {
  const { location } = options;
  const nc = await connectNats(location, options.signal === undefined ? {} : { signal: options.signal });
  const closer = new AbortController();
  const cleanup: (() => void)[] = [];
  // The connection's state, from its status events: whether it is on a server (a stream nobody answered
  // is looked into only then: see StreamDiagnosis), and what a reconnect must resume.
  let isConnected = true;
  let onReconnect = (): void => undefined;
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnecting') isConnected = false;
      else if (status.type === 'reconnect') {
        isConnected = true;
        onReconnect();
      }
    }
  })();
  try {
    const names = journalNames(location.prefix);
    const jsm = await natsCall('connecting to JetStream', () => jetstreamManager(nc));
    const diagnosis: StreamDiagnosis = {
      jsm: await jetstreamManager(nc, { timeout: DIAGNOSIS_REQUEST_MS, checkAPI: false }),
      server: () => (isConnected ? nc.getServer() : undefined),
    };
    const js = jetstream(nc);
    const servers = clusterSize(nc);
    const replicas = resolveReplicas(location.replicas, servers);
    // Only a cluster holds replicated streams (and there another hub may raise the count at any time),
    // so conditional writes are checked on every cluster (see conditional-write.ts).
    const isReplicated = servers > 1;
    const deadline = Date.now() + location.connectTimeoutMs;
    const journalReplicas = await untilAnswered(() => ensureJournalStream(jsm, names, replicas), deadline);
    const kv = await untilAnswered(
      () => NatsKvSpace.open(js, jsm, names.kvBucket, replicas, { diagnosis, isReplicated }),
      deadline,
    );
    cleanup.push(() => kv.close());
    // Leases and delays are decided on the server's time (see ServerClock); measured before anything
    // else reads the clock. The probe is an empty record on the event subject, which reads skip.
    const serverClock = new ServerClock({
      local: options.clock,
      probe: async () => {
        const sentAt = options.clock.now();
        const ack = await untilAnswered(
          () => js.publish(names.eventSubject, new Uint8Array(0)),
          Date.now() + NEW_STREAM_READY_MS,
        );
        const ackedAt = options.clock.now();
        const stored = await jsm.streams.getMessage(names.stream, { seq: ack.seq });
        // Trimmed away already (a tiny `retain` under heavy load): that sample is lost, say so.
        if (stored === null) throw new Error(`the clock probe at sequence ${ack.seq} is gone`);
        return { sentAt, ackedAt, serverAt: stored.time.getTime() };
      },
    });
    if (options.isClockTrusted !== true)
      await natsCall('reading the server time', () => serverClock.measure());
    cleanup.push(() => serverClock.close());
    const clock = serverClock;
    const view = new JournalView();
    const listeners = new AvailableListeners();
    const onAvailable = (mailbox: string): void => listeners.notify(mailbox);
    const applyFollowed = followedRecordApplier({ names, view, clock, onAvailable });
    const ownWrites = new OwnWrites({ view, clock, applyFollowed });
    const closeSignal = closer.signal;
    const writer = new JournalWriter({
      js,
      jsm,
      names,
      view,
      clock,
      ownWrites,
      closeSignal,
      diagnosis,
      isReplicated,
    });
    const lastSeq = await writer.lastSeq();
    const follower = await JournalFollower.start({
      js,
      names,
      onRecord: (msg) => ownWrites.deliver(msg),
      followedSeq: () => view.followedSeq,
    });
    cleanup.push(() => follower.close());
    onReconnect = () => void follower.resume(view.followedSeq);
    await view.waitFollowed(lastSeq, { timeoutMs: CATCH_UP_TIMEOUT_MS, signal: closeSignal });
    if (options.isClockTrusted !== true) serverClock.startMeasuring();
    return {
      nc,
      jsm,
      names,
      view,
      follower,
      kv,
      closer,
      listeners,
      writer,
      replicas: journalReplicas,
      clock: serverClock,
    };
  } catch (err) {
    for (const step of cleanup) step();
    await nc.close().catch(() => undefined); // the open error is the one worth reporting
    throw storeUnavailable(err, 'opening the store');
  }
}
