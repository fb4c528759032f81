import type { JetStreamManager } from '@nats-io/jetstream';
import { parseMessageSubject, type JournalNames } from './journal-names.js';
import type { JournalView } from './journal-view.js';
import { natsCall } from './nats-errors.js';
import { readStream } from './stream-reader.js';

/** Collaborators and settings of {@link trimJournal}. */
export interface TrimJournalOptions {
  readonly jsm: JetStreamManager;
  readonly names: JournalNames;
  readonly view: JournalView;
  /** Newest records to keep. */
  readonly retain: number;
}

/**
 * One retention pass over the journal: removes records older than the newest `retain`, except the
 * newest record of every live or dead message (its state). Subjects of acked messages go entirely.
 * Every purge only ever removes records below the cut-off or keeps a subject's newest record, so it
 * is safe against concurrent writers and other hubs trimming at the same time. Runs only once this
 * store's view has followed past the cut-off. Resolves the number of records removed.
 */
export async function trimJournal(options: TrimJournalOptions): Promise<number> {
  const { jsm, names, view } = options;
  const info = await natsCall('reading the journal state', () => jsm.streams.info(names.stream));
  const { first_seq: firstSeq, last_seq: lastSeq } = info.state;
  const cutoff = lastSeq - options.retain + 1;
  if (firstSeq >= cutoff || view.followedSeq < cutoff) return 0;
  const purge = async (
    opts: { filter: string; seq: number } | { filter: string; keep: number },
  ): Promise<number> =>
    (await natsCall('trimming the journal', () => jsm.streams.purge(names.stream, opts))).purged;
  let removed = await purge({ filter: names.eventSubject, seq: cutoff });
  const old = await readStream(
    jsm.jetstream(),
    {
      stream: names.stream,
      start: { afterSeq: firstSeq - 1 },
      filter: names.messageSubjects,
      headersOnly: true,
    },
    cutoff - firstSeq,
  );
  const subjects = new Set(old.filter((msg) => msg.seq < cutoff).map((msg) => msg.subject));
  for (const subject of subjects) {
    const parts = parseMessageSubject(names, subject);
    const entry = parts === null ? undefined : view.entry(parts.mailbox, parts.envelopeId);
    // A live or dead message whose newest record is below the cut-off keeps exactly that record.
    const isStateOld = entry !== undefined && entry.revision < cutoff;
    removed += await purge(isStateOld ? { filter: subject, keep: 1 } : { filter: subject, seq: cutoff });
  }
  return removed;
}
