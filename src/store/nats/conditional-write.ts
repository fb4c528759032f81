import type { JetStreamClient, JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import type { MsgHdrs } from '@nats-io/transport-node';
import { isWrongLastSequence, natsCall } from './nats-errors.js';

/** Reads of the first record after a write before giving up on a replica that lags behind. */
const FIRST_AFTER_READS = 8;
/** Rounds of restoring the first record before leaving the rest to the other writers (see below). */
const RESTORE_ROUNDS = 8;

/**
 * Why this exists: on a replicated (R3) stream nats-server checks `Nats-Expected-Last-Subject-Sequence`
 * before it proposes a write to its replicas, not when the write is applied, so two writes expecting
 * the same sequence that arrive close together can both be stored (nats-server#4320; 109 of 300 racing
 * pairs on the Debian 2.9.10 here; fixed for the common case in 2.9.21 and still possible around a
 * leader change, nats-server#8469). On a single-replica stream the check is atomic.
 *
 * So after a conditional write on a replicated stream the writer looks at the first record after the
 * sequence it expected: when that is its own record, it won. Otherwise it lost a race the server
 * should have refused, and its record is stored after the winner's: it copies the winner's record
 * over its own (conditional on its own being newest), so the subject reads as the winner left it, and
 * reports a conflict. Readers take the newest record of a subject, so they see the loser's record only
 * for the moment until the copy lands.
 */
export interface ConditionalWrites {
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly stream: string;
  /** False for a single-replica stream, whose conditions the server applies atomically. */
  readonly isReplicated: boolean;
}

/**
 * The first record on `subject` after sequence `expected` (a write that expected `expected` is the one
 * that took effect when it is this). Asks any replica first (direct get) and the stream leader when
 * that fails or a replica answers from before `seq` is stored.
 */
async function firstRecordAfter(
  writes: ConditionalWrites,
  subject: string,
  expected: number,
  seq: number,
): Promise<StoredMsg> {
  const query = { seq: expected + 1, next_by_subj: subject };
  // Any replica may answer a direct get (when the stream allows them); null when that fails.
  const direct = await writes.jsm.direct.getMessage(writes.stream, query).catch(() => null);
  if (direct !== null && direct.seq <= seq) return direct;
  for (let read = 0; read < FIRST_AFTER_READS; read++) {
    // The leader's stream-message API takes `next_by_subj` too (nats-server >= 2.9), untyped.
    const found = await natsCall('checking a conditional write', () =>
      writes.jsm.streams.getMessage(writes.stream, query as unknown as { seq: number }),
    );
    if (found !== null && found.seq <= seq) return found;
  }
  throw new Error(`the stream lost record ${seq} of ${subject} just written`);
}

/**
 * Checks the conditional write that stored `seq` on `subject` expecting `expected` (see
 * {@link ConditionalWrites}). Resolves true when it took effect; false when it lost a race the server
 * let through, after copying the winner's record over it. `copy` turns the winner's stored record into
 * the bytes and headers to write (so a record that takes its position from its own sequence keeps it).
 */
export async function tookEffect(
  writes: ConditionalWrites,
  write: { readonly subject: string; readonly expected: number; readonly seq: number },
  copy: (winner: StoredMsg) => { readonly data: Uint8Array; readonly headers?: MsgHdrs },
): Promise<boolean> {
  if (!writes.isReplicated) return true;
  const { subject } = write;
  let { expected, seq } = write;
  let winner = await firstRecordAfter(writes, subject, expected, seq);
  if (winner.seq === seq) return true;
  for (let round = 0; round < RESTORE_ROUNDS; round++) {
    const { data, headers } = copy(winner);
    const restored = await writes.js
      .publish(subject, data, {
        expect: { lastSubjectSequence: seq },
        ...(headers === undefined ? {} : { headers }),
      })
      .then(
        (ack) => ack.seq,
        (err: unknown) => (isWrongLastSequence(err) ? null : Promise.reject(err)),
      );
    // Refused: a newer record already builds on this one; whoever wrote it continues from there.
    if (restored === null) return false;
    // The copy is a conditional write too, and can itself lose such a race.
    expected = seq;
    seq = restored;
    winner = await firstRecordAfter(writes, subject, expected, seq);
    if (winner.seq === seq) return false;
  }
  return false;
}
