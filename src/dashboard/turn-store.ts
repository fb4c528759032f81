import type { TranscriptEntry, TurnSummary } from '../gateways/http/api-schemas.js';

/** Turn summaries the page keeps (the newest by start). */
const DEFAULT_CAPACITY = 5_000;

/**
 * Every agent's turn summaries the page knows, from `GET /api/turns` and the live `agent.turn_*` events,
 * one per turn id. A finished summary is never replaced by a running one (a late or replayed
 * `turn_started`); otherwise the one with the newer `lastEventAt` wins. Pure logic (no DOM).
 */
export class TurnStore {
  readonly #turns = new Map<string, TurnSummary>();
  readonly #capacity: number;
  #sorted: TurnSummary[] | undefined;
  /** Bumped on every change, so views can skip a render when nothing changed. */
  version = 0;

  constructor(capacity = DEFAULT_CAPACITY) {
    this.#capacity = capacity;
  }

  /** Adds or updates one turn; false when the known summary is as new. */
  upsert(turn: TurnSummary): boolean {
    const known = this.#turns.get(turn.id);
    if (known !== undefined) {
      if (known.state !== 'running' && turn.state === 'running') return false;
      if (known.state === turn.state && turn.lastEventAt < known.lastEventAt) return false;
      if (
        known.state === turn.state &&
        turn.lastEventAt === known.lastEventAt &&
        turn.entries <= known.entries
      )
        return false;
    }
    this.#turns.set(turn.id, turn);
    this.#changed();
    if (this.#turns.size > this.#capacity * 1.1) this.#trim();
    return true;
  }

  /** Adds or updates each turn; true when anything changed. */
  merge(turns: readonly TurnSummary[]): boolean {
    let isChanged = false;
    for (const turn of turns) if (this.upsert(turn)) isChanged = true;
    return isChanged;
  }

  /**
   * Brings a running turn's summary up to date with one live transcript entry (its last sign of life,
   * entry and tool counts, usage, current activity) until the hub's own summary replaces it.
   */
  noteEntry(turnId: string, entry: TranscriptEntry): boolean {
    const turn = this.#turns.get(turnId);
    if (turn === undefined || turn.state !== 'running' || entry.at < turn.lastEventAt) return false;
    const activity = activityOf(entry);
    this.#turns.set(turnId, {
      ...turn,
      lastEventAt: entry.at,
      entries: Math.max(turn.entries, entry.n + 1),
      toolCalls: turn.toolCalls + (entry.kind === 'tool' ? 1 : 0),
      ...(entry.kind === 'usage' && { usage: entry.usage }),
      ...(activity !== undefined && { activity: { ...activity, at: entry.at } }),
    });
    this.#changed();
    return true;
  }

  get(id: string): TurnSummary | undefined {
    return this.#turns.get(id);
  }

  /** Every turn, oldest start first. */
  all(): readonly TurnSummary[] {
    this.#sorted ??= [...this.#turns.values()].sort((a, b) => a.startedAt - b.startedAt);
    return this.#sorted;
  }

  /** The turns of one agent, newest first. */
  forAgent(agent: string): TurnSummary[] {
    return this.all()
      .filter((t) => t.agent === agent)
      .reverse();
  }

  get size(): number {
    return this.#turns.size;
  }

  #changed(): void {
    this.#sorted = undefined;
    this.version += 1;
  }

  #trim(): void {
    const drop = this.all().slice(0, this.#turns.size - this.#capacity);
    for (const turn of drop) this.#turns.delete(turn.id);
    this.#changed();
  }
}

function activityOf(entry: TranscriptEntry): { kind: string; text: string } | undefined {
  if (entry.kind === 'tool') return { kind: 'tool', text: `${entry.name}: ${entry.summary}` };
  if (entry.kind === 'waiting') return { kind: 'waiting', text: entry.question };
  if (entry.kind === 'message') return { kind: 'message', text: entry.text };
  return undefined;
}
