import * as z from 'zod';
import type { KvState } from '../../bus/bus.types.js';
import type { Clock, Timer } from '../../core/clock.js';
import { MusubiError } from '../../core/errors.js';
import type { BusEvent } from '../../core/events.js';
import type { IdGenerator } from '../../core/ids.js';
import type { Logger } from '../../core/logger.js';
import type { SecretMask } from '../../core/secret-mask.js';
import { SerialQueue } from '../../core/serial-queue.js';
import type {
  AgentBackend,
  AgentRunEvent,
  AgentRunInput,
  AgentRunResult,
  AgentRunner,
  AgentUsage,
  TurnLabel,
} from '../agent-runner.js';
import { transcriptEntry, turnSummary, type TranscriptEntry, type TurnSummary } from './turn-record.js';

const SUMMARY_PREFIX = 'turn/';
const TRANSCRIPT_PREFIX = 'transcript/';
const PROMPT_CHARS = 500;
const OUTCOME_CHARS = 500;
const ACTIVITY_CHARS = 200;
/** Characters kept of one entry's text fields. */
const ENTRY_TEXT_CHARS = 4096;
/** Characters kept over all of one turn's entries. */
const TRANSCRIPT_CHARS = 256 * 1024;
const HEARTBEAT_MS = 30_000;
/** A running turn whose record was not written for this long lost the process that ran it. */
const LOST_AFTER_MS = 3 * HEARTBEAT_MS;
const PRUNE_EVERY = 20;

const transcriptSchema = z.object({ entries: z.array(transcriptEntry), droppedEntries: z.number() });

/** Options of {@link TurnLog}. */
export interface TurnLogOptions {
  readonly kv: KvState;
  readonly events: { publish(event: BusEvent): Promise<unknown> };
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly logger: Logger;
  /** Turns kept; the oldest beyond it are deleted with their transcripts. Default 2000. */
  readonly retention?: number;
  /** Entries kept per turn (the first ones; later ones are counted as dropped). Default 500. */
  readonly maxEntries?: number;
  /** How long a running turn's new entries wait before its record is written. Default 2000 ms. */
  readonly flushMs?: number;
  /**
   * Masks the prompt as recorded (the agent gets it as it is); what runners report is masked by the
   * runner itself (`withSecretMask`). Default: the prompt is recorded as it is.
   */
  readonly secretMask?: SecretMask;
}

/** One turn in the log: its summary and its transcript. */
export interface TurnDetail {
  readonly turn: TurnSummary;
  readonly entries: readonly TranscriptEntry[];
  readonly droppedEntries: number;
}

/** Which turns {@link TurnLog.list} returns. */
export interface TurnQuery {
  readonly agent?: string | undefined;
  readonly run?: string | undefined;
  /** Turns that were running at or after this time. */
  readonly since?: number | undefined;
  /** The newest this many, default 200. */
  readonly limit?: number | undefined;
}

/** An entry before it has its number and time (distributes over the kinds). */
type EntryFields = TranscriptEntry extends infer E
  ? E extends unknown
    ? Omit<E, 'n' | 'at'>
    : never
  : never;

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… [${text.length - max} more characters]` : text;
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function stateOf(result: AgentRunResult): TurnSummary['state'] {
  if (result.canceled) return 'cancelled';
  if (result.timedOut) return 'timed_out';
  return result.isError ? 'failed' : 'succeeded';
}

function baseName(command: string | undefined): string {
  return (command ?? '').split(/[\\/]/).at(-1) ?? '';
}

/** The transcript entry of a runner event (without number and time); undefined for raw output and sessions. */
function entryOf(event: AgentRunEvent): EntryFields | undefined {
  switch (event.type) {
    case 'started':
      // Only the program: its arguments hold the prompt, which the summary already has.
      return { kind: 'started', command: baseName(event.argv[0]) };
    case 'message':
      return { kind: 'message', text: cut(event.text, ENTRY_TEXT_CHARS) };
    case 'tool':
      return {
        kind: 'tool',
        ...(event.callId !== undefined && { callId: event.callId }),
        name: event.name,
        toolKind: event.kind,
        summary: oneLine(event.summary, ACTIVITY_CHARS),
        input: cut(event.input, ENTRY_TEXT_CHARS),
      };
    case 'tool_result':
      return {
        kind: 'tool_result',
        ...(event.callId !== undefined && { callId: event.callId }),
        isError: event.isError,
        output: cut(event.output, ENTRY_TEXT_CHARS),
      };
    case 'usage':
      return { kind: 'usage', usage: event.usage };
    case 'error':
      return { kind: 'error', message: cut(event.message, ENTRY_TEXT_CHARS) };
    case 'waiting':
      return { kind: 'waiting', question: cut(event.question, ENTRY_TEXT_CHARS) };
    case 'stopping':
      return { kind: 'stopping', reason: event.reason };
    case 'line':
    case 'session':
      return undefined;
  }
}

function entryChars(entry: EntryFields): number {
  switch (entry.kind) {
    case 'message':
      return entry.text.length;
    case 'tool':
      return entry.summary.length + entry.input.length;
    case 'tool_result':
      return entry.output.length;
    case 'error':
      return entry.message.length;
    case 'waiting':
      return entry.question.length;
    default:
      return 32;
  }
}

/** What a running turn's card says it is doing: its newest tool call, question or message. */
function activityOf(entry: TranscriptEntry): TurnSummary['activity'] {
  switch (entry.kind) {
    case 'tool':
      return { kind: entry.toolKind, text: entry.summary || entry.name, at: entry.at };
    case 'waiting':
      return { kind: 'waiting', text: oneLine(entry.question, ACTIVITY_CHARS), at: entry.at };
    case 'message':
      return { kind: 'message', text: oneLine(entry.text, ACTIVITY_CHARS), at: entry.at };
    case 'error':
      return { kind: 'error', text: oneLine(entry.message, ACTIVITY_CHARS), at: entry.at };
    default:
      return undefined;
  }
}

/** One turn being recorded: feed it the runner's events, then its result. */
export class TurnRecording {
  readonly #log: TurnLog;
  readonly #writes = new SerialQueue();
  #summary: TurnSummary;
  readonly #entries: TranscriptEntry[] = [];
  #dropped = 0;
  #chars = 0;
  #flushTimer: Timer | undefined;
  #heartbeat: Timer | undefined;
  #isDone = false;

  constructor(log: TurnLog, summary: TurnSummary) {
    this.#log = log;
    this.#summary = summary;
  }

  get id(): string {
    return this.#summary.id;
  }

  /** Writes the first record and announces the turn. */
  start(): void {
    void this.#write();
    this.#beat();
    this.#log.publish('agent.turn_started', { turn: this.#summary });
  }

  /** Records one runner event: a transcript entry (published live) and a sign of life. */
  onEvent(event: AgentRunEvent): void {
    if (this.#isDone) return;
    const now = this.#log.clock.now();
    this.#summary = { ...this.#summary, lastEventAt: now };
    const fields = entryOf(event);
    if (fields === undefined) return;
    const entry = { n: this.#summary.entries, at: now, ...fields } as TranscriptEntry;
    this.#add(entry);
    if (event.type === 'usage') this.#summary = { ...this.#summary, usage: event.usage };
    if (event.type === 'tool') this.#summary = { ...this.#summary, toolCalls: this.#summary.toolCalls + 1 };
    const activity = activityOf(entry);
    if (activity !== undefined) this.#summary = { ...this.#summary, activity };
    this.#log.publish('agent.turn_event', { turnId: this.id, agent: this.#summary.agent, entry });
    this.#scheduleFlush();
  }

  /** Records how the turn ended (a result, or the error that kept it from starting); resolves once written. */
  async finish(outcome: { result: AgentRunResult } | { error: unknown }): Promise<void> {
    if (this.#isDone) return;
    this.#isDone = true;
    this.#flushTimer?.cancel();
    this.#heartbeat?.cancel();
    const now = this.#log.clock.now();
    let state: TurnSummary['state'];
    let text: string;
    let usage: AgentUsage = this.#summary.usage;
    if ('result' in outcome) {
      const { result } = outcome;
      state = stateOf(result);
      text = result.isError ? (result.errorMessage ?? result.text) : result.text;
      if (result.usage !== undefined) usage = result.usage;
    } else {
      state = 'failed';
      text = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
    }
    const entry: TranscriptEntry = {
      n: this.#summary.entries,
      at: now,
      kind: 'finished',
      state,
      text: cut(text, ENTRY_TEXT_CHARS),
    };
    this.#add(entry, true);
    const { activity: _activity, ...rest } = this.#summary;
    this.#summary = {
      ...rest,
      state,
      endedAt: now,
      heartbeatAt: now,
      usage,
      ...(text.trim() !== '' && { outcome: oneLine(text, OUTCOME_CHARS) }),
    };
    this.#log.publish('agent.turn_event', { turnId: this.id, agent: this.#summary.agent, entry });
    this.#log.publish('agent.turn_finished', { turn: this.#summary });
    await this.#write();
    this.#log.finished();
  }

  #add(entry: TranscriptEntry, isLast = false): void {
    const chars = entryChars(entry);
    const isFull = this.#entries.length >= this.#log.maxEntries || this.#chars + chars > TRANSCRIPT_CHARS;
    // The last entry (how the turn ended) is always kept.
    if (isFull && !isLast) this.#dropped += 1;
    else {
      this.#entries.push(entry);
      this.#chars += chars;
    }
    this.#summary = { ...this.#summary, entries: this.#summary.entries + 1 };
  }

  #scheduleFlush(): void {
    if (this.#flushTimer !== undefined) return;
    this.#flushTimer = this.#log.clock.setTimer(() => {
      this.#flushTimer = undefined;
      void this.#write();
    }, this.#log.flushMs);
  }

  #beat(): void {
    this.#heartbeat = this.#log.clock.setTimer(() => {
      if (this.#isDone) return;
      void this.#write();
      this.#beat();
    }, HEARTBEAT_MS);
  }

  /** Writes the summary and the transcript as they stand (one write at a time, in order). */
  #write(): Promise<void> {
    const summary = this.#isDone ? this.#summary : { ...this.#summary, heartbeatAt: this.#log.clock.now() };
    const transcript = { entries: [...this.#entries], droppedEntries: this.#dropped };
    return this.#writes.run(async () => {
      try {
        await this.#log.kv.kvSet(`${TRANSCRIPT_PREFIX}${summary.id}`, transcript);
        await this.#log.kv.kvSet(`${SUMMARY_PREFIX}${summary.id}`, summary);
      } catch (err) {
        this.#log.logger.warn({ err, turn: summary.id }, 'could not write the turn record');
      }
    });
  }
}

/**
 * The log of agent turns: every turn's summary (KV `turn/<id>`) and transcript (KV `transcript/<id>`),
 * written while the turn runs (its new entries within `flushMs`, a heartbeat every 30 s) and when it
 * ends, and announced on the bus (`agent.turn_started`, `agent.turn_event` per entry,
 * `agent.turn_finished`). Bounded per turn (`maxEntries`, 256 Ki characters, 4 Ki per entry) and in all
 * (`retention` turns). Turn ids are time-ordered.
 */
export class TurnLog {
  readonly kv: KvState;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly maxEntries: number;
  readonly flushMs: number;
  readonly #events: TurnLogOptions['events'];
  readonly #ids: IdGenerator;
  readonly #retention: number;
  readonly #secretMask: SecretMask | undefined;
  #finishedSincePrune = 0;
  #pruning: Promise<void> = Promise.resolve();

  constructor(options: TurnLogOptions) {
    this.kv = options.kv;
    this.clock = options.clock;
    this.logger = options.logger;
    this.#events = options.events;
    this.#ids = options.ids;
    this.#retention = options.retention ?? 2000;
    this.maxEntries = options.maxEntries ?? 500;
    this.flushMs = options.flushMs ?? 2000;
    this.#secretMask = options.secretMask;
  }

  /** Starts recording one turn of `agent` on `backend`. */
  begin(agent: string, backend: AgentBackend, input: Pick<AgentRunInput, 'prompt' | 'label'>): TurnRecording {
    const now = this.clock.now();
    const label: TurnLabel = input.label ?? {};
    const prompt = this.#secretMask?.mask(input.prompt) ?? input.prompt;
    const recording = new TurnRecording(this, {
      id: this.#ids.next(),
      agent,
      backend,
      ...(label.team !== undefined && { team: label.team }),
      ...(label.run !== undefined && { run: label.run }),
      ...(label.phase !== undefined && { phase: label.phase }),
      ...(label.subtask !== undefined && { subtask: label.subtask }),
      state: 'running',
      startedAt: now,
      lastEventAt: now,
      heartbeatAt: now,
      prompt: prompt.slice(0, PROMPT_CHARS),
      promptChars: input.prompt.length,
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
      toolCalls: 0,
      entries: 0,
    });
    recording.start();
    return recording;
  }

  /**
   * `runner` with every turn recorded as a turn of `agent`; `label` fills in what the turn's own label
   * leaves out (the agent's team).
   */
  recorded(agent: string, runner: AgentRunner, label: TurnLabel = {}): AgentRunner {
    return {
      backend: runner.backend,
      available: () => runner.available(),
      run: async (input) => {
        const recording = this.begin(input.label?.agent ?? agent, runner.backend, {
          prompt: input.prompt,
          label: { ...label, ...input.label },
        });
        try {
          const result = await runner.run({
            ...input,
            onEvent: (event) => {
              recording.onEvent(event);
              input.onEvent?.(event);
            },
          });
          await recording.finish({ result });
          return result;
        } catch (err) {
          await recording.finish({ error: err });
          throw err;
        }
      },
    };
  }

  /** The turns matching `query`, newest first; a running turn whose process is gone reads `interrupted`. */
  async list(query: TurnQuery = {}): Promise<TurnSummary[]> {
    const now = this.clock.now();
    const entries = await this.kv.kvList(SUMMARY_PREFIX);
    const turns: TurnSummary[] = [];
    for (const entry of entries) {
      const parsed = turnSummary.safeParse(entry.value);
      if (!parsed.success) continue;
      const t = parsed.data;
      if (query.agent !== undefined && t.agent !== query.agent) continue;
      if (query.run !== undefined && t.run !== query.run) continue;
      if (query.since !== undefined && (t.endedAt ?? now) < query.since) continue;
      turns.push(this.#asSeen(t, now));
    }
    turns.sort((a, b) => b.startedAt - a.startedAt || (a.id < b.id ? 1 : -1));
    return turns.slice(0, query.limit ?? 200);
  }

  /** The turn `id` with its transcript; NOT_FOUND for an unknown (or pruned) turn. */
  async get(id: string): Promise<TurnDetail> {
    const summary = await this.kv.kvGet(`${SUMMARY_PREFIX}${id}`);
    const parsed = turnSummary.safeParse(summary?.value);
    if (summary === null || !parsed.success) {
      throw new MusubiError('NOT_FOUND', `no turn ${id}`, { details: { id } });
    }
    const stored = await this.kv.kvGet(`${TRANSCRIPT_PREFIX}${id}`);
    const transcript = transcriptSchema.safeParse(stored?.value);
    return {
      turn: this.#asSeen(parsed.data, this.clock.now()),
      entries: transcript.success ? transcript.data.entries : [],
      droppedEntries: transcript.success ? transcript.data.droppedEntries : 0,
    };
  }

  #asSeen(turn: TurnSummary, now: number): TurnSummary {
    if (turn.state !== 'running' || now - turn.heartbeatAt <= LOST_AFTER_MS) return turn;
    return { ...turn, state: 'interrupted' };
  }

  /** Publishes a turn event; a failure is logged, never thrown into the turn. */
  publish(type: `agent.${string}`, data: Record<string, unknown>): void {
    this.#events.publish({ type, data }).catch((err: unknown) => {
      this.logger.debug({ err, type }, 'could not publish a turn event');
    });
  }

  /** Called when a turn was written for the last time: now and then the oldest turns are pruned. */
  finished(): void {
    this.#finishedSincePrune += 1;
    if (this.#finishedSincePrune < PRUNE_EVERY) return;
    this.#finishedSincePrune = 0;
    this.#pruning = this.#pruning.then(() => this.prune());
  }

  /** Deletes the oldest turns (and transcripts) beyond the retention; resolves once done. */
  async prune(): Promise<void> {
    try {
      const entries = await this.kv.kvList(SUMMARY_PREFIX);
      if (entries.length <= this.#retention) return;
      const ids = entries.map((e) => e.key.slice(SUMMARY_PREFIX.length)).sort();
      for (const id of ids.slice(0, ids.length - this.#retention)) {
        await this.kv.kvDelete(`${TRANSCRIPT_PREFIX}${id}`);
        await this.kv.kvDelete(`${SUMMARY_PREFIX}${id}`);
      }
    } catch (err) {
      this.logger.warn({ err }, 'could not prune old turns');
    }
  }
}
