import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { MusubiError } from '../../core/errors.js';
import type { JournalNames } from './journal-names.js';
import { natsCall } from './nats-errors.js';

/**
 * Creates the journal stream of `names` unless it exists: file storage, limits retention with no
 * limits (the store trims it itself, see journal-trimmer.ts), direct gets and `replicas` copies. An
 * existing stream with fewer replicas is raised to `replicas` (never lowered). Safe to race with other
 * hubs opening the same prefix. Resolves the stream's replica count; rejects with STORE_UNAVAILABLE
 * when NATS fails, naming the replica count when the cluster cannot hold it.
 */
export async function ensureJournalStream(
  jsm: JetStreamManager,
  names: JournalNames,
  replicas: number,
): Promise<number> {
  return natsCall('creating the journal stream', async () => {
    try {
      return await raiseReplicas(jsm, names.stream, replicas);
    } catch (err) {
      if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound)) throw err;
    }
    try {
      await withReplicaHint(replicas, 'the journal stream', () =>
        jsm.streams.add({
          name: names.stream,
          subjects: [names.messageSubjects, names.eventSubject],
          storage: StorageType.File,
          retention: RetentionPolicy.Limits,
          discard: DiscardPolicy.Old,
          allow_direct: true,
          num_replicas: replicas,
        }),
      );
      return replicas;
    } catch (err) {
      // Another hub created it between our info and add: nats-server 2.9 then answers "subjects overlap
      // with an existing stream" (or "stream name already in use") instead of accepting the same config.
      if (!(err instanceof JetStreamApiError) || !(await streamExists(jsm, names.stream))) throw err;
      return raiseReplicas(jsm, names.stream, replicas);
    }
  });
}

/**
 * Raises `stream` to `replicas` copies when it has fewer, and resolves the count it has then. Rejects
 * like `jsm.streams.info` (StreamNotFound included) or with the cluster's refusal, explained.
 */
export async function raiseReplicas(
  jsm: JetStreamManager,
  stream: string,
  replicas: number,
): Promise<number> {
  const { config } = await jsm.streams.info(stream);
  const current = config.num_replicas ?? 1;
  if (current >= replicas) return current;
  await withReplicaHint(replicas, `stream ${stream}`, () =>
    jsm.streams.update(stream, { num_replicas: replicas }),
  );
  return replicas;
}

/** Runs a stream create or update, turning a cluster's "cannot place that many replicas" into a clear error. */
export async function withReplicaHint<T>(replicas: number, what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (replicas <= 1 || !(err instanceof JetStreamApiError)) throw err;
    throw new MusubiError(
      'STORE_UNAVAILABLE',
      `NATS store: ${what} needs ${replicas} replicas, which the JetStream cluster could not place ` +
        `(${err.message}); give fewer (replicas=1 in the store URL, or jetstream.replicas in musubi.yaml) ` +
        'or run that many JetStream servers',
      { cause: err, details: { replicas } },
    );
  }
}

async function streamExists(jsm: JetStreamManager, stream: string): Promise<boolean> {
  try {
    await jsm.streams.info(stream);
    return true;
  } catch {
    // Not there (or NATS failing): the caller reports its own error.
    return false;
  }
}
