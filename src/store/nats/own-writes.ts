import type { Clock } from '../../core/clock.js';
import type { JournalRecord } from './journal-record.js';
import type { JournalView } from './journal-view.js';

/** What OwnWrites needs to know of a delivered record (a JetStream message in practice). */
export interface FollowedMessage {
  readonly subject: string;
  readonly seq: number;
}

interface InFlight<M> {
  writes: number;
  readonly held: M[];
}

/**
 * Sits between the journal follower and the view, and knows which subjects this process is writing
 * right now. The follower often delivers a record before the write's acknowledgement arrives; a record
 * on such a subject is held instead of parsed, and when the write ends the held records are applied in
 * stream order: the one the write stored from the object already in hand, any other (another hub's,
 * or one whose write failed) through the follower path. This saves parsing own records and keeps the
 * view's followed sequence honest: it never passes a record that is still held.
 */
export class OwnWrites<M extends FollowedMessage> {
  readonly #view: JournalView;
  readonly #clock: Clock;
  readonly #applyFollowed: (msg: M) => void;
  readonly #subjects = new Map<string, InFlight<M>>();
  #lastDelivered = 0;

  constructor(options: { view: JournalView; clock: Clock; applyFollowed: (msg: M) => void }) {
    this.#view = options.view;
    this.#clock = options.clock;
    this.#applyFollowed = options.applyFollowed;
  }

  /** Marks the start of a write to `subject`; pair every call with {@link OwnWrites.end}. */
  begin(subject: string): void {
    const state = this.#subjects.get(subject);
    if (state === undefined) this.#subjects.set(subject, { writes: 1, held: [] });
    else state.writes++;
  }

  /** Takes the follower's next record (in stream order): applies it now, or holds it. */
  deliver(msg: M): void {
    this.#lastDelivered = msg.seq;
    const state = this.#subjects.get(msg.subject);
    if (state === undefined) this.#applyFollowed(msg);
    else state.held.push(msg);
    this.#advance();
  }

  /**
   * Ends a write. `written` is the record it stored and its sequence, or null when it stored nothing.
   * Returns true when the follower had already delivered the written record and this call applied it;
   * false when the caller must still apply it (as a fetched record).
   */
  end(subject: string, written: { readonly seq: number; readonly record: JournalRecord } | null): boolean {
    const state = this.#subjects.get(subject);
    if (state === undefined) return false;
    state.writes--;
    // Held records up to the written one are settled now; later ones wait for the other writes.
    const limit = state.writes === 0 || written === null ? Infinity : written.seq;
    const release = state.held.filter((msg) => msg.seq <= limit);
    state.held.splice(0, state.held.length, ...state.held.filter((msg) => msg.seq > limit));
    if (state.writes === 0) this.#subjects.delete(subject);
    let isApplied = false;
    for (const msg of release) {
      if (written !== null && msg.seq === written.seq) {
        this.#view.apply(subject, written.seq, written.record, { now: this.#clock.now(), isFetched: false });
        isApplied = true;
      } else {
        this.#applyFollowed(msg);
      }
    }
    this.#advance();
    return isApplied;
  }

  /** Tells the view how far the follower got, stopping short of the oldest held record. */
  #advance(): void {
    let safe = this.#lastDelivered;
    for (const { held } of this.#subjects.values()) {
      for (const msg of held) safe = Math.min(safe, msg.seq - 1);
    }
    this.#view.noteFollowed(safe);
  }
}
