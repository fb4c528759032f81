import type { Clock } from '../../core/clock.js';

/** The demo's phases, in the order they run. */
export const DEMO_PHASES = [
  'setup',
  'plan',
  'implement',
  'docs',
  'review',
  'test',
  'changelog',
  'verify',
] as const;
export type DemoPhase = (typeof DEMO_PHASES)[number];

/** Where a phase stands. */
export type PhaseState = 'pending' | 'running' | 'done' | 'failed' | 'skipped';

/** One phase as a progress bar shows it. */
export interface PhaseView {
  readonly phase: DemoPhase;
  readonly state: PhaseState;
  readonly done: number;
  readonly total: number;
  /** The latest thing worth saying about the phase ('' when nothing yet). */
  readonly note: string;
  readonly startedAt?: number;
  readonly endedAt?: number;
}

/** One change: the phase as it now stands, and a line for the run's story when something happened. */
export interface ProgressChange {
  readonly view: PhaseView;
  readonly logLine?: string;
}

type Row = { -readonly [K in keyof PhaseView]: PhaseView[K] };

/**
 * The progress of one demo run, phase by phase. Pure bookkeeping: every change is handed to
 * `onChange` (the CLI draws bars from it, the dashboard lists phases as tasks). A finished phase
 * ignores further updates, so late reports from agents cannot move a bar backwards.
 */
export class DemoProgress {
  readonly #rows = new Map<DemoPhase, Row>();
  readonly #clock: Clock;
  readonly #onChange: (change: ProgressChange) => void;

  constructor(options: { readonly clock: Clock; readonly onChange: (change: ProgressChange) => void }) {
    this.#clock = options.clock;
    this.#onChange = options.onChange;
    for (const phase of DEMO_PHASES)
      this.#rows.set(phase, { phase, state: 'pending', done: 0, total: 0, note: '' });
  }

  /** Marks `phase` running with `total` steps (a no-op when it already runs or ended). */
  start(phase: DemoPhase, total: number, note = ''): void {
    const row = this.#row(phase);
    if (row.state !== 'pending') return;
    Object.assign(row, { state: 'running', total, startedAt: this.#clock.now() });
    if (note !== '') row.note = note;
    this.#emit(row, note === '' ? undefined : note);
  }

  /** Changes the number of steps of a phase that has not ended. */
  setTotal(phase: DemoPhase, total: number): void {
    const row = this.#open(phase);
    if (row === undefined) return;
    row.total = total;
    this.#emit(row);
  }

  /** One more step done (starting the phase if needed); `note` also goes to the story. */
  advance(phase: DemoPhase, note?: string): void {
    if (this.#row(phase).state === 'pending') this.start(phase, 1);
    const row = this.#open(phase);
    if (row === undefined) return;
    row.done += 1;
    row.total = Math.max(row.total, row.done);
    if (note !== undefined) row.note = note;
    this.#emit(row, note);
  }

  /** Something happened in a phase that does not end it (a retry, a dead letter). */
  note(phase: DemoPhase, text: string): void {
    if (this.#row(phase).state === 'pending') this.start(phase, 1);
    const row = this.#open(phase);
    if (row === undefined) return;
    row.note = text;
    this.#emit(row, text);
  }

  /** Ends `phase` successfully: the bar fills up. */
  finish(phase: DemoPhase, note?: string): void {
    this.#end(phase, 'done', note);
  }

  /** Ends `phase` as failed. */
  fail(phase: DemoPhase, note: string): void {
    this.#end(phase, 'failed', note);
  }

  /** Ends `phase` without running it. */
  skip(phase: DemoPhase, note: string): void {
    this.#end(phase, 'skipped', note);
  }

  /** Every phase, in order. */
  views(): PhaseView[] {
    return DEMO_PHASES.map((p) => ({ ...this.#row(p) }));
  }

  /** The first phase that is running, else undefined. */
  current(): DemoPhase | undefined {
    return DEMO_PHASES.find((p) => this.#row(p).state === 'running');
  }

  /** Where the run stands: the running phase, else the last phase that started; undefined before any. */
  latest(): DemoPhase | undefined {
    return this.current() ?? DEMO_PHASES.findLast((p) => this.#row(p).state !== 'pending');
  }

  #end(phase: DemoPhase, state: 'done' | 'failed' | 'skipped', note: string | undefined): void {
    const row = this.#row(phase);
    if (row.state !== 'pending' && row.state !== 'running') return;
    const now = this.#clock.now();
    row.startedAt ??= now;
    row.endedAt = now;
    row.state = state;
    if (state === 'done') row.done = row.total = Math.max(row.total, row.done, 1);
    if (note !== undefined) row.note = note;
    this.#emit(row, note);
  }

  #open(phase: DemoPhase): Row | undefined {
    const row = this.#row(phase);
    return row.state === 'running' ? row : undefined;
  }

  #row(phase: DemoPhase): Row {
    const row = this.#rows.get(phase);
    if (row === undefined) throw new RangeError(`unknown demo phase ${phase}`);
    return row;
  }

  #emit(row: Row, logLine?: string): void {
    this.#onChange({ view: { ...row }, ...(logLine !== undefined && logLine !== '' && { logLine }) });
  }
}
