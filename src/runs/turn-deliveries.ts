import type { AgentRunEvent, AgentRunner, TurnLabel } from '../agents/agent-runner.js';
import { runTurn, type TurnOutcome } from '../agents/agent-turn.js';
import type { Bus } from '../bus/bus.types.js';
import type { Clock } from '../core/clock.js';
import { isMusubiError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Delivery } from '../store/store.js';
import { ESCALATION_CHOICES, runMailbox, type Escalation, type RunEscalations } from './turn-escalations.js';

/** `0.5 s`, `12 s`: a duration in seconds, to a tenth under ten seconds. */
export function secondsText(ms: number): string {
  return `${ms < 10_000 ? Number((ms / 1000).toFixed(1)) : Math.round(ms / 1000)} s`;
}

/** One turn of a run, as the engine asks for it. */
export interface TurnAsk {
  /**
   * The turn's envelope id: the same in every process that runs the run (a subtask's id for its work,
   * `<subtask>.retry`, `<subtask>.resolve`, `<run>.plan`), so a resume asks for the very message an
   * interrupted process left behind and the message's history holds every attempt.
   */
  readonly id: string;
  /** The member (mailbox) that runs it. */
  readonly member: string;
  readonly runner: AgentRunner;
  readonly prompt: string;
  readonly cwd: string;
  readonly timeoutMs: number;
  readonly label: TurnLabel;
  /** What the turn is, in words, for progress lines and questions (`implement-sub1`, `the plan`). */
  readonly title: string;
  readonly onEvent?: (event: AgentRunEvent) => void;
  /** After every attempt, crashed and stalled ones too, before it is settled (the run's counts and usage). */
  readonly onAttempt?: (outcome: TurnOutcome, attempt: number) => Promise<void>;
}

/** A turn that ran to its end (exit 0 or not). */
export type FinishedTurn = Extract<TurnOutcome, { kind: 'finished' }>;

/** How an asked turn ended. */
export type TurnEnd =
  | { readonly kind: 'done'; readonly outcome: FinishedTurn; readonly attempts: number }
  /** The bus gave up on it and the human chose to skip it or abort the run. */
  | {
      readonly kind: 'given-up';
      readonly choice: 'skip' | 'abort';
      readonly attempts: number;
      readonly reason: string;
      readonly by: string;
    }
  /** The run stopped first. */
  | { readonly kind: 'canceled' };

/** What the deliveries report as they go (the engine passes it on as run progress). */
export type DeliveryProgress =
  | { readonly kind: 'stalled'; readonly turn: string; readonly silentMs: number; readonly attempt: number }
  | {
      readonly kind: 'retrying';
      readonly turn: string;
      readonly attempt: number;
      readonly delayMs: number;
      readonly reason: string;
    }
  | {
      readonly kind: 'escalated';
      readonly runId: string;
      readonly turn: string;
      readonly member: string;
      readonly attempts: number;
      readonly reason: string;
    }
  | { readonly kind: 'answered'; readonly turn: string; readonly choice: string; readonly by: string }
  | { readonly kind: 'waiting-lease'; readonly turn: string; readonly untilMs: number };

/** Options of {@link TurnDeliveries.open}. */
export interface TurnDeliveriesOptions {
  readonly bus: Bus;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly runId: string;
  /** The run's members; each one's mailbox is consumed, one turn at a time. */
  readonly members: readonly string[];
  /** A turn silent (no event) this long is stopped and given back to the bus as failed. */
  readonly stallMs: number;
  readonly escalations: RunEscalations;
  readonly onProgress: (progress: DeliveryProgress) => void;
  /** The run's stop: no new claims, running turns are cancelled, asked turns end `canceled`. */
  readonly signal: AbortSignal;
}

interface Pending {
  readonly ask: TurnAsk;
  attempts: number;
  /** Why the newest attempt failed, for the retry line. */
  lastFailure: string;
  isEscalated: boolean;
  readonly resolve: (end: TurnEnd) => void;
}

/**
 * A run's turns as deliveries on its bus. {@link ask} sends a turn to its member's mailbox (from the run's
 * mailbox, its envelope id stable across resumes) and resolves when it ended; each member's mailbox is
 * consumed through `bus.consume`, one turn at a time. While a turn runs its lease is renewed (the
 * consumer's heartbeat); a turn that says nothing for `stallMs` is stopped and nacked, as is a turn
 * whose agent process was killed from outside: the bus's retry policy delivers it again after its
 * backoff, and a process killed mid-turn leaves the lease to lapse, so the next owner of the run gets
 * the same message again. Once its attempts are used up the bus dead-letters it and raises an
 * `escalation`; the run then asks the human ({@link RunEscalations}) and obeys: `retry` moves it back
 * from the dead letters, `skip` and `abort` discard it and end the ask with that choice.
 *
 * A delivery nobody in this process asked for (an interrupted process's turn this one no longer wants
 * from that member) is acked and logged; asking for it again sends it anew under the same id.
 */
export class TurnDeliveries {
  readonly #o: TurnDeliveriesOptions;
  readonly #pending = new Map<string, Pending>();
  readonly #gates = new Map<string, Set<() => void>>();
  readonly #loops: Promise<void>[] = [];
  readonly #log: Logger;

  private constructor(options: TurnDeliveriesOptions) {
    this.#o = options;
    this.#log = options.logger.child({ component: 'run.turns', runId: options.runId });
  }

  /** Starts consuming the members' mailboxes and following the bus's escalations. */
  static async open(options: TurnDeliveriesOptions): Promise<TurnDeliveries> {
    const deliveries = new TurnDeliveries(options);
    const after = await options.bus.lastEventCursor();
    deliveries.#loops.push(deliveries.#follow(after));
    for (const member of options.members) deliveries.#loops.push(deliveries.#consume(member));
    return deliveries;
  }

  /** Resolves once every consumer has stopped (after the run's signal aborted) and its turns settled. */
  async closed(): Promise<void> {
    await Promise.all(this.#loops);
  }

  /** Sends `turn` to its member and resolves how it ended (see the class comment). Never rejects on the turn. */
  async ask(turn: TurnAsk): Promise<TurnEnd> {
    const { bus, signal } = this.#o;
    if (signal.aborted) return { kind: 'canceled' };
    let pending: Pending | undefined;
    const ended = new Promise<TurnEnd>((resolve) => {
      pending = { ask: turn, attempts: 0, lastFailure: '', isEscalated: false, resolve };
    });
    if (pending === undefined) throw new Error('unreachable');
    const asked = pending;
    this.#pending.set(turn.id, asked);
    const onStop = (): void => asked.resolve({ kind: 'canceled' });
    signal.addEventListener('abort', onStop, { once: true });
    try {
      const sent = await bus.send({
        id: turn.id,
        to: turn.member,
        from: runMailbox(this.#o.runId),
        type: 'run.turn',
        body: turn.prompt,
        thread: turn.id,
        headers: { run: this.#o.runId, turn: turn.title, answers: ESCALATION_CHOICES.join(', ') },
      });
      this.#open(turn.member);
      if (sent.isDuplicate) await this.#resumeLeftover(asked);
      return await ended;
    } finally {
      signal.removeEventListener('abort', onStop);
      this.#pending.delete(turn.id);
    }
  }

  /** The same message is still in the member's mailbox from an earlier process: dead, or leased by it. */
  async #resumeLeftover(pending: Pending): Promise<void> {
    const { bus } = this.#o;
    const { id, member, title } = pending.ask;
    const dead = (await bus.listDeadLetters({ mailbox: member })).find((d) => d.envelope.id === id);
    if (dead !== undefined) {
      void this.#giveUp(pending, dead.envelope.attempt, dead.reason);
      return;
    }
    const left = (await bus.peek(member)).find((m) => m.envelope.id === id);
    if (left?.state === 'leased')
      this.#o.onProgress({
        kind: 'waiting-lease',
        turn: title,
        untilMs: Math.max(0, left.availableAt - this.#o.clock.now()),
      });
  }

  /** Wakes `member`'s consumer, which claims only while a turn of it is asked for. */
  #open(member: string): void {
    const waiting = this.#gates.get(member);
    if (waiting === undefined) return;
    this.#gates.delete(member);
    for (const wake of waiting) wake();
  }

  #isWanted(member: string): boolean {
    for (const p of this.#pending.values()) if (p.ask.member === member) return true;
    return false;
  }

  async #waitUntilWanted(member: string, signal: AbortSignal): Promise<void> {
    if (this.#isWanted(member) || signal.aborted) return;
    await new Promise<void>((resolve) => {
      const gate = this.#gates.get(member) ?? new Set<() => void>();
      this.#gates.set(member, gate);
      const done = (): void => {
        gate.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      gate.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  async #consume(member: string): Promise<void> {
    const { bus, signal } = this.#o;
    await bus
      .consume(member, (delivery, context) => this.#handle(delivery, context.signal), {
        signal,
        beforeReceive: (stop) => this.#waitUntilWanted(member, stop),
        onSettled: (delivery, settlement) => {
          const pending = this.#pending.get(delivery.envelope.id);
          if (pending === undefined || settlement.kind !== 'nacked') return;
          const { outcome } = settlement;
          if (outcome.outcome !== 'retry') return;
          this.#o.onProgress({
            kind: 'retrying',
            turn: pending.ask.title,
            attempt: pending.attempts + 1,
            delayMs: outcome.delayMs,
            reason: pending.lastFailure,
          });
        },
      })
      .catch((err: unknown) => {
        if (!isMusubiError(err, 'BUS_CLOSED')) this.#log.error({ err, member }, 'turn consumer stopped');
      });
  }

  async #handle(
    delivery: Delivery,
    signal: AbortSignal,
  ): Promise<{ kind: 'ack' } | { kind: 'nack'; reason: string } | { kind: 'settled' }> {
    const pending = this.#pending.get(delivery.envelope.id);
    if (pending === undefined || pending.ask.member !== delivery.mailbox) {
      this.#log.info(
        { messageId: delivery.envelope.id, mailbox: delivery.mailbox },
        'a turn an earlier process asked for that this run no longer waits for here; acked',
      );
      return { kind: 'ack' };
    }
    pending.attempts += 1;
    const attempt = pending.attempts;
    const outcome = await this.#attempt(pending.ask, signal, delivery.envelope.attempt);
    await pending.ask
      .onAttempt?.(outcome, attempt)
      .catch((err: unknown) => this.#log.error({ err }, 'recording a turn attempt failed'));
    // The run stopped: its record says the turn did not finish, and a resume sends it anew.
    if (outcome.kind === 'canceled') return { kind: 'ack' };
    if (outcome.kind === 'crashed') {
      pending.lastFailure = outcome.reason;
      return { kind: 'nack', reason: outcome.reason };
    }
    await this.#o.bus
      .ack(delivery.deliveryId)
      .catch((err: unknown) => this.#log.warn({ err }, 'could not ack a finished turn'));
    pending.resolve({ kind: 'done', outcome, attempts: attempt });
    return { kind: 'settled' };
  }

  /** One attempt of `turn`, stopped when `signal` aborts or when it is silent for `stallMs`. */
  async #attempt(turn: TurnAsk, signal: AbortSignal, busAttempt: number): Promise<TurnOutcome> {
    const { clock, stallMs } = this.#o;
    const stop = new AbortController();
    const onStop = (): void => stop.abort();
    signal.addEventListener('abort', onStop, { once: true });
    let isStalled = false;
    let watchdog = clock.setTimer(() => undefined, Infinity);
    const arm = (): void => {
      watchdog.cancel();
      watchdog = clock.setTimer(() => {
        isStalled = true;
        this.#o.onProgress({ kind: 'stalled', turn: turn.title, silentMs: stallMs, attempt: busAttempt });
        stop.abort();
      }, stallMs);
    };
    arm();
    try {
      const outcome = await runTurn(turn.runner, {
        prompt: turn.prompt,
        cwd: turn.cwd,
        timeoutMs: turn.timeoutMs,
        signal: stop.signal,
        label: turn.label,
        onEvent: (event) => {
          arm();
          turn.onEvent?.(event);
        },
      });
      if (isStalled && !signal.aborted)
        return { kind: 'crashed', reason: `stalled: no output for ${secondsText(stallMs)}` };
      return outcome;
    } finally {
      watchdog.cancel();
      signal.removeEventListener('abort', onStop);
    }
  }

  /** Follows the bus's events: escalations of asked turns, and dead letters moved or discarded by hand. */
  async #follow(after: number): Promise<void> {
    const { bus, signal, escalations } = this.#o;
    try {
      for await (const event of bus.events({ after, signal })) {
        if (event.type === 'escalation') {
          const pending = this.#pending.get(event.messageId);
          if (pending !== undefined && pending.ask.member === event.mailbox)
            void this.#giveUp(pending, event.attempts, event.reason);
        } else if (event.type === 'message.requeued' || event.type === 'message.discarded') {
          const choice = event.type === 'message.requeued' ? 'retry' : 'skip';
          escalations.noticed(event.messageId, choice, 'the dead letters');
        }
      }
    } catch (err) {
      if (!signal.aborted && !isMusubiError(err, 'BUS_CLOSED'))
        this.#log.error({ err }, 'following escalations stopped');
    }
  }

  /** Asks the human about a dead-lettered turn and does what they chose. */
  async #giveUp(pending: Pending, attempts: number, reason: string): Promise<void> {
    if (pending.isEscalated) return;
    pending.isEscalated = true;
    const { bus, escalations } = this.#o;
    const { id, member, title } = pending.ask;
    const escalation: Escalation = { turn: id, title, member, attempts, reason };
    this.#o.onProgress({ kind: 'escalated', runId: this.#o.runId, turn: title, member, attempts, reason });
    const answer = await escalations.ask(escalation);
    pending.isEscalated = false;
    if (answer === undefined) return; // the run stops; the ask ends canceled
    this.#o.onProgress({ kind: 'answered', turn: title, choice: answer.choice, by: answer.by });
    try {
      if (answer.choice === 'retry') await bus.retryDeadLetter(id);
      else await bus.discardDeadLetter(id);
    } catch (err) {
      // Moved back or discarded already (that was the answer).
      if (!isMusubiError(err, 'NOT_FOUND')) this.#log.error({ err, turn: id }, 'could not act on the answer');
    }
    if (answer.choice !== 'retry')
      pending.resolve({
        kind: 'given-up',
        choice: answer.choice,
        attempts: pending.attempts,
        reason,
        by: answer.by,
      });
  }
}
