import { priorityRank, type Envelope } from '../../core/envelope.js';
import { LiveMailbox, type MessageRecord } from '../live-mailbox.js';

/** Live rows of one mailbox mirrored at most: a larger mailbox is read from the table each time. */
export const MAX_MIRRORED_ROWS = 1_024;
/** Mailboxes mirrored at most; past it the mirror starts over. */
const MAX_MIRRORED_MAILBOXES = 4_096;

/** One live row as loaded: its envelope frozen, with attempt 0 (the row's count is `attempt`). */
export interface LiveRow {
  readonly seq: number;
  readonly priority: number;
  readonly envelope: Envelope;
  readonly attempt: number;
  readonly isLeased: boolean;
  readonly availableAt: number;
  /** In state 1 (leased or delayed, however its time compares to now): only a claim moves it back. */
  readonly isWaiting: boolean;
}

/** A mailbox as the table holds it: its live rows in (priority, seq) order and its dead letters' count. */
export interface MailboxRows {
  readonly live: readonly LiveRow[];
  readonly deadLetters: number;
}

/** One mirrored mailbox: its live messages and how many dead letters it holds. */
export interface MirroredMailbox {
  readonly live: LiveMailbox;
  deadLetters: number;
}

/**
 * How the mirror reads the table: a mailbox's rows, null when it has more than `limit` live ones,
 * `corrupt` when one of their envelopes does not decode.
 */
export interface MirrorSource {
  /** PRAGMA data_version as of this turn's read transaction. */
  dataVersion(): number;
  load(mailbox: string, limit: number): MailboxRows | null | 'corrupt';
}

/**
 * The live messages of the mailboxes this connection reads, kept in memory, so peek, count, a claim's
 * look for anything claimable and the next due time cost a lookup instead of queries. It holds the
 * committed state: a mailbox is loaded from the table when first read, and this connection's writes
 * are applied to it right after their COMMIT (see SqliteGroupCommit), in commit order. Another
 * connection's commit changes `data_version`, checked once per turn when the mirror is read: the
 * mirror then starts over, so such a commit shows from the next turn on, as with reads of the table.
 * A mailbox with more than {@link MAX_MIRRORED_ROWS} live messages is not mirrored (undefined: read the
 * table), nor anything once a change it should follow finds the mirror out of step.
 */
export class SqliteMirror {
  readonly #source: MirrorSource;
  readonly #boxes = new Map<string, MirroredMailbox | null>();
  #seenVersion: number | undefined;

  constructor(source: MirrorSource) {
    this.#source = source;
  }

  /** The committed state of `mailbox`, loading it when needed; undefined when it is not mirrored. */
  mailbox(mailbox: string): MirroredMailbox | undefined {
    const version = this.#source.dataVersion();
    if (version !== this.#seenVersion) {
      this.#boxes.clear();
      this.#seenVersion = version;
    }
    let box = this.#boxes.get(mailbox);
    if (box === undefined) {
      const rows = this.#source.load(mailbox, MAX_MIRRORED_ROWS);
      // A row that does not decode is left to the table's own reads, which report it (and a claim
      // quarantines it): the mailbox is tried again next time.
      if (rows === 'corrupt') return undefined;
      box = rows === null ? null : mirrored(mailbox, rows);
      if (this.#boxes.size >= MAX_MIRRORED_MAILBOXES) this.#boxes.clear();
      this.#boxes.set(mailbox, box);
    }
    return box ?? undefined;
  }

  /**
   * Where message `id` of `mailbox` sits in the table as far as the mirror knows, without loading or
   * checking anything: a hint for a write, which must hold up without it.
   */
  placeOf(mailbox: string, id: string): { state: number; priority: number; seq: number } | undefined {
    const record = this.#boxes.get(mailbox)?.live.messages.get(id);
    if (record === undefined) return undefined;
    return { state: record.isWaiting ? 1 : 0, priority: record.rank, seq: record.seq };
  }

  /** Forgets everything (the next read loads from the table). */
  clear(): void {
    this.#boxes.clear();
  }

  // Committed changes of this connection, applied to the mailbox when it is mirrored.

  /** A message was appended with `seq` (a frozen `envelope`, attempt 0) at `now`. */
  appended(mailbox: string, seq: number, envelope: Envelope, now: number): void {
    const box = this.#boxes.get(mailbox);
    if (box === undefined || box === null) return;
    if (box.live.messages.size >= MAX_MIRRORED_ROWS) this.#boxes.set(mailbox, null);
    else box.live.add(record(seq, priorityRank(envelope.priority), envelope, 0, false, now), now);
  }

  /** A claim at `now` moved the due messages back and leased message `id` as delivery `attempt`. */
  claimed(mailbox: string, id: string, attempt: number, leaseUntil: number, now: number): void {
    const box = this.#boxes.get(mailbox);
    if (box === undefined || box === null) return;
    box.live.promoteDue(now);
    const found = box.live.messages.get(id);
    if (found === undefined) this.#boxes.delete(mailbox);
    else box.live.lease(found, attempt, leaseUntil);
  }

  /** Message `id` left the live messages (acked, taken, quarantined; `isDead`: dead-lettered). */
  removed(mailbox: string, id: string, isDead = false): void {
    const box = this.#boxes.get(mailbox);
    if (box === undefined || box === null) return;
    const found = box.live.messages.get(id);
    if (found === undefined) this.#boxes.delete(mailbox);
    else box.live.remove(found);
    if (isDead) box.deadLetters++;
  }

  /** Message `id`'s lease ended: claimable again at `availableAt`. */
  released(mailbox: string, id: string, availableAt: number, now: number): void {
    const box = this.#boxes.get(mailbox);
    if (box === undefined || box === null) return;
    const found = box.live.messages.get(id);
    if (found === undefined) this.#boxes.delete(mailbox);
    else box.live.release(found, availableAt, now);
  }

  /** Message `id`'s lease now ends at `leaseUntil`. */
  extended(mailbox: string, id: string, leaseUntil: number, now: number): void {
    const box = this.#boxes.get(mailbox);
    if (box === undefined || box === null) return;
    const found = box.live.messages.get(id);
    if (found === undefined) this.#boxes.delete(mailbox);
    else box.live.extend(found, leaseUntil, now);
  }

  /** A dead letter left `mailbox` (requeued: it comes back through {@link SqliteMirror.appended}; discarded). */
  letterGone(mailbox: string): void {
    const box = this.#boxes.get(mailbox);
    if (box !== undefined && box !== null) box.deadLetters--;
  }
}

function record(
  seq: number,
  rank: number,
  envelope: Envelope,
  attempt: number,
  isLeased: boolean,
  availableAt: number,
): MessageRecord {
  return { seq, rank, envelope, attempt, isLeased, availableAt, isWaiting: false, heapIndex: -1 };
}

function mirrored(mailbox: string, rows: MailboxRows): MirroredMailbox {
  const live = new LiveMailbox(mailbox);
  for (const row of rows.live) {
    const r = record(row.seq, row.priority, row.envelope, row.attempt, row.isLeased, row.availableAt);
    live.restore(r, row.isWaiting);
  }
  return { live, deadLetters: rows.deadLetters };
}
