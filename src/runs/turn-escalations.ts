import type { Bus } from '../bus/bus.types.js';
import { isMusubiError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { Envelope } from '../core/envelope.js';

/** What the human may answer to a turn that used up its attempts. */
export const ESCALATION_CHOICES = ['retry', 'skip', 'abort'] as const;
export type EscalationChoice = (typeof ESCALATION_CHOICES)[number];

/** A turn of a run that the bus dead-lettered: it waits for the human's choice. */
export interface Escalation {
  /** The turn's envelope id (a subtask id, `<run>.plan`, …). */
  readonly turn: string;
  /** What the turn is, in words (`implement-sub1`). */
  readonly title: string;
  /** The member whose mailbox holds it. */
  readonly member: string;
  readonly attempts: number;
  /** Why the last attempt failed, as the bus recorded it. */
  readonly reason: string;
}

/** Who answered, in words (`you at the terminal`, `human`, `the dead letters`), and what. */
export interface EscalationAnswer {
  readonly choice: EscalationChoice;
  readonly by: string;
}

/**
 * Asks the person at the terminal (or answers by a standing rule: `--on-dead-letter skip`); resolves
 * the answer, or undefined when there is nobody to ask or `signal` aborted (another answer came first).
 */
export type AskHuman = (escalation: Escalation, signal: AbortSignal) => Promise<EscalationAnswer | undefined>;

/** The mailbox a run's turns are sent from, where answers to its escalations arrive: `run.<id>`. */
export function runMailbox(runId: string): string {
  return `run.${runId}`;
}

/** The choice a message body names (its first word, any case), or undefined. */
export function parseChoice(text: string): EscalationChoice | undefined {
  const word = text.trim().split(/\s+/, 1)[0]?.toLowerCase() ?? '';
  return ESCALATION_CHOICES.find((c) => c === word);
}

interface Open {
  readonly escalation: Escalation;
  readonly resolve: (answer: EscalationAnswer) => void;
}

/** Options of {@link RunEscalations}. */
export interface RunEscalationsOptions {
  readonly bus: Pick<Bus, 'consume' | 'send'>;
  readonly runId: string;
  readonly logger: Logger;
  /** The terminal's prompt, when the run has one. */
  readonly askHuman?: AskHuman;
  /** The run's stop: open questions resolve undefined, the answer consumer ends. */
  readonly signal: AbortSignal;
}

/**
 * The run's questions to the human about turns the bus gave up on. Each is answered by whichever comes
 * first: the terminal prompt ({@link AskHuman}), a message to the run's mailbox (`run.<id>`: a reply to
 * the escalation in the dashboard's inbox, or `musubi runs answer`), or the dead letter itself being
 * moved back (retry) or discarded (skip) on the page or with `musubi bus dead-letters`. A message that
 * names no choice, or no open question, is answered with what to write instead.
 */
export class RunEscalations {
  readonly #o: RunEscalationsOptions;
  readonly #open = new Map<string, Open>();
  readonly #consuming: Promise<void>;

  constructor(options: RunEscalationsOptions) {
    this.#o = options;
    this.#consuming = options.bus
      .consume(runMailbox(options.runId), (delivery) => this.#onAnswer(delivery.envelope), {
        signal: options.signal,
      })
      .catch((err: unknown) => {
        if (!isMusubiError(err, 'BUS_CLOSED')) options.logger.error({ err }, 'run answers stopped');
      });
  }

  /** The turns waiting for an answer now. */
  get waiting(): readonly Escalation[] {
    return [...this.#open.values()].map((o) => o.escalation);
  }

  /** Asks about `escalation`; resolves the first answer, or undefined when the run stops first. */
  async ask(escalation: Escalation): Promise<EscalationAnswer | undefined> {
    const { signal } = this.#o;
    if (signal.aborted) return undefined;
    const asked = new AbortController();
    const answered = new Promise<EscalationAnswer | undefined>((resolve) => {
      this.#open.set(escalation.turn, { escalation, resolve });
      signal.addEventListener('abort', () => resolve(undefined), { once: true });
    });
    const prompt = this.#o.askHuman;
    if (prompt !== undefined) {
      void prompt(escalation, AbortSignal.any([signal, asked.signal])).then(
        (answer) => {
          if (answer !== undefined) this.noticed(escalation.turn, answer.choice, answer.by);
        },
        (err: unknown) => this.#o.logger.warn({ err }, 'the terminal prompt failed'),
      );
    }
    try {
      return await answered;
    } finally {
      asked.abort();
      this.#open.delete(escalation.turn);
    }
  }

  /** An answer from outside the run's mailbox (the terminal, a dead letter moved back or discarded). */
  noticed(turn: string, choice: EscalationChoice, by: string): void {
    const open = this.#open.get(turn);
    if (open === undefined) return;
    this.#open.delete(turn);
    open.resolve({ choice, by });
  }

  /** Resolves once the answer consumer has stopped (after the run's signal aborted). */
  closed(): Promise<void> {
    return this.#consuming;
  }

  async #onAnswer(envelope: Envelope): Promise<void> {
    const choice = parseChoice(envelope.body);
    const open = [...this.#open.values()];
    const byThread = open.find((o) => o.escalation.turn === envelope.thread);
    const target = byThread ?? (open.length === 1 ? open[0] : undefined);
    let problem: string | undefined;
    if (open.length === 0) problem = 'no turn of this run is waiting for an answer';
    else if (choice === undefined)
      problem = `answer ${ESCALATION_CHOICES.join(', ')} (got '${envelope.body.trim().slice(0, 40)}')`;
    else if (target === undefined)
      problem = `${open.length} turns wait for an answer; reply to one of them (${open.map((o) => o.escalation.title).join(', ')})`;
    if (problem !== undefined || target === undefined || choice === undefined) {
      await this.#tell(envelope, `musubi run ${this.#o.runId}: ${problem ?? 'not understood'}`);
      return;
    }
    this.noticed(target.escalation.turn, choice, envelope.from);
  }

  async #tell(to: Envelope, text: string): Promise<void> {
    await this.#o.bus
      .send({
        to: to.from,
        from: runMailbox(this.#o.runId),
        type: 'reply',
        body: text,
        ...(to.thread === undefined ? {} : { thread: to.thread }),
      })
      .catch((err: unknown) => this.#o.logger.warn({ err }, 'could not answer the answer'));
  }
}
