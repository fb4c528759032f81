import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  type JetStreamManager,
} from '@nats-io/jetstream';
import type { JournalNames } from './journal-names.js';
import { natsCall } from './nats-errors.js';

/**
 * Creates the journal stream of `names` unless it exists: file storage, limits retention with no
 * limits (the store trims it itself, see journal-trimmer.ts) and direct gets. Safe to race with
 * other hubs opening the same prefix. Rejects with STORE_UNAVAILABLE when NATS fails.
 */
export async function ensureJournalStream(jsm: JetStreamManager, names: JournalNames): Promise<void> {
  await natsCall('creating the journal stream', async () => {
    try {
      await jsm.streams.info(names.stream);
      return;
    } catch (err) {
      if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound)) throw err;
    }
    try {
      await jsm.streams.add({
        name: names.stream,
        subjects: [names.messageSubjects, names.eventSubject],
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
        discard: DiscardPolicy.Old,
        allow_direct: true,
      });
    } catch (err) {
      // Another hub created it between our info and add: nats-server 2.9 then answers "subjects overlap
      // with an existing stream" (or "stream name already in use") instead of accepting the same config.
      if (!(err instanceof JetStreamApiError) || !(await streamExists(jsm, names.stream))) throw err;
    }
  });
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
