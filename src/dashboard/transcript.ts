import type { TranscriptEntry } from '../gateways/http/api-schemas.js';

/** Entries one turn's transcript holds at most in the page (a turn's own bound is on the hub). */
const MAX_ENTRIES = 5_000;

/**
 * One turn's transcript as the page holds it: the entries from `GET /api/turns/<id>` and the live
 * `agent.turn_event`s, in the order of their `n`, each `n` once (the reply and the stream overlap while
 * a turn runs, and the stream replays after a reconnect). Pure logic (no DOM).
 */
export class Transcript {
  readonly turnId: string;
  readonly #entries = new Map<number, TranscriptEntry>();
  #sorted: TranscriptEntry[] | undefined = [];
  /** Entries the hub left out (its bound), as its reply said. */
  droppedEntries = 0;

  constructor(turnId: string) {
    this.turnId = turnId;
  }

  /** Adds one entry; false when its `n` is already known (or the page's bound is reached). */
  add(entry: TranscriptEntry): boolean {
    if (this.#entries.has(entry.n) || this.#entries.size >= MAX_ENTRIES) return false;
    const last = this.#sorted?.at(-1);
    this.#entries.set(entry.n, entry);
    // The common case, a live entry after every known one, keeps the sorted list.
    if (this.#sorted !== undefined && (last === undefined || entry.n > last.n)) this.#sorted.push(entry);
    else this.#sorted = undefined;
    return true;
  }

  /** Adds each entry not known yet; resolves how many were new. */
  merge(entries: readonly TranscriptEntry[]): number {
    let added = 0;
    for (const entry of entries) if (this.add(entry)) added += 1;
    return added;
  }

  /** The entries, oldest first. */
  list(): readonly TranscriptEntry[] {
    this.#sorted ??= [...this.#entries.values()].sort((a, b) => a.n - b.n);
    return this.#sorted;
  }

  /** The name of the tool call `callId` belongs to, to label its result. */
  toolNameOf(callId: string | undefined): string | undefined {
    if (callId === undefined) return undefined;
    for (const entry of this.#entries.values()) {
      if (entry.kind === 'tool' && entry.callId === callId) return entry.name;
    }
    return undefined;
  }

  get size(): number {
    return this.#entries.size;
  }
}
