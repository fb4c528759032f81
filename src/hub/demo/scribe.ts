import type { AgentRunner, AgentRunResult } from '../../agents/agent-runner.js';
import type { Bus, ConsumeVerdict } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import { createDeadlineSignal } from '../../core/deadline-signal.js';
import { isMusubiError, MusubiError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { lastEventCursor } from '../../gateways/http/event-tail.js';
import type { DemoProgress } from './demo-progress.js';
import { shortText } from './yadon-phase-tracker.js';

/** The scribe's name, which is also its bus mailbox. */
export const SCRIBE = 'scribe';
/** A lease outlasts the longest turn, so a slow turn is never handed to a second attempt meanwhile. */
const LEASE_MARGIN_MS = 30_000;

/**
 * The scribe: an agent attached straight to the bus, as an MCP client would be. It receives from its
 * mailbox under a lease, runs each message body as one turn in `projectDir`, acks when the turn
 * succeeded and nacks when it failed — the bus then retries with backoff and, after the last attempt,
 * dead-letters the message and raises an `escalation`. Resolves when `signal` aborts or the bus closes.
 */
export async function runScribe(o: {
  readonly bus: Bus;
  readonly runner: AgentRunner;
  readonly projectDir: string;
  readonly turnTimeoutMs: number;
  readonly signal: AbortSignal;
  readonly logger: Logger;
}): Promise<void> {
  const log = o.logger.child({ component: 'demo.scribe', agentId: SCRIBE });
  await o.bus
    .consume(
      SCRIBE,
      async (delivery, { signal }): Promise<ConsumeVerdict> => {
        let result: AgentRunResult | undefined;
        try {
          result = await o.runner.run({
            prompt: delivery.envelope.body,
            cwd: o.projectDir,
            timeoutMs: o.turnTimeoutMs,
            signal,
          });
        } catch (err) {
          log.warn({ err, messageId: delivery.envelope.id }, 'scribe turn could not start');
        }
        // Stopping mid-turn leaves the lease to run out: the message is redelivered on the next start.
        if (signal.aborted) return { kind: 'abandon' };
        if (result !== undefined && !result.isError) return { kind: 'ack' };
        const reason = result === undefined ? 'turn could not start' : shortText(result.text, 200);
        return { kind: 'nack', reason };
      },
      {
        signal: o.signal,
        leaseMs: o.turnTimeoutMs + LEASE_MARGIN_MS,
        autoExtend: false,
        onSettled: (delivery, settlement) => {
          if (settlement.kind !== 'nacked') return;
          const { outcome } = settlement.outcome;
          log.info({ messageId: delivery.envelope.id, outcome }, 'scribe turn failed');
        },
      },
    )
    .catch((err: unknown) => {
      if (!isMusubiError(err, 'BUS_CLOSED')) throw err;
    });
}

/** How the changelog task went, as the lead saw it on the bus. */
export interface ChangelogOutcome {
  readonly isDone: boolean;
  readonly attempts: number;
  /** Times the bus gave the message back after a failed attempt (nacks with a backoff). */
  readonly retries: number;
  readonly deadLettered: number;
  /** Times the lead moved it back from the dead letters. */
  readonly retriedFromDeadLetters: number;
}

/**
 * The lead's side of the changelog step: sends `prompt` to the scribe's mailbox and follows that one
 * message through the bus's event stream — claims, nacks with their backoff, the dead letter. The lead
 * answers the first `escalation` by moving the message back from the dead letters (`retryDeadLetter`);
 * a second one ends the step as failed. Resolves on the ack (done) or that failure; rejects with
 * AGENT_TIMEOUT after `timeoutMs`, or the reason of `signal`.
 */
export async function writeChangelog(o: {
  readonly bus: Bus;
  readonly prompt: string;
  readonly progress: DemoProgress;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  readonly clock: Clock;
}): Promise<ChangelogOutcome> {
  const { bus, progress } = o;
  const after = await lastEventCursor(bus);
  const { envelope } = await bus.send({ to: SCRIBE, from: 'lead', type: 'task', body: o.prompt });
  progress.start('changelog', 1, 'lead put the changelog task in the scribe\u2019s bus mailbox');
  using deadline = createDeadlineSignal({ signals: [o.signal], timeoutMs: o.timeoutMs, clock: o.clock });
  const stop = deadline.signal;
  const seen = { attempts: 0, retries: 0, deadLettered: 0, retriedFromDeadLetters: 0 };
  for await (const event of bus.events({ after, signal: stop })) {
    if (!('mailbox' in event) || event.mailbox !== SCRIBE || event.messageId !== envelope.id) continue;
    if (event.type === 'message.claimed') seen.attempts++;
    else if (event.type === 'message.nacked') {
      seen.retries++;
      progress.note(
        'changelog',
        `scribe attempt ${seen.attempts} failed; the bus retries in ${event.delayMs} ms`,
      );
    } else if (event.type === 'escalation') {
      seen.deadLettered++;
      if (seen.retriedFromDeadLetters > 0) {
        progress.fail('changelog', `dead-lettered again after the retry (${event.reason})`);
        return { isDone: false, ...seen };
      }
      progress.note(
        'changelog',
        `dead-lettered after ${event.attempts} attempts; lead retries it from the dead letters`,
      );
      await bus.retryDeadLetter(envelope.id);
      seen.retriedFromDeadLetters++;
    } else if (event.type === 'message.acked') {
      progress.finish('changelog', `the scribe acked its task on attempt ${seen.attempts}`);
      return { isDone: true, ...seen };
    }
  }
  o.signal.throwIfAborted();
  throw new MusubiError('AGENT_TIMEOUT', `the scribe did not finish the changelog within ${o.timeoutMs} ms`);
}
