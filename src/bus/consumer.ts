import type { Clock, Timer } from '../core/clock.js';
import { isMusubiError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { sleep } from '../core/sleep.js';
import type { Delivery } from '../store/store.js';
import type { Bus, ConsumeHandler, ConsumeOptions, ConsumeVerdict, Settlement } from './bus.types.js';

/** How long one receive waits before the consumer looks at its stop signal again. */
const RECEIVE_WAIT_MS = 30_000;
/** Pause after a failed receive (or beforeReceive), so a broken store is not hammered. */
const RECEIVE_ERROR_PAUSE_MS = 1_000;
/** Bounds of the renewal interval (a third of the lease): no busy loop, and renewed at least every minute. */
const MIN_RENEW_EVERY_MS = 10;
const MAX_RENEW_EVERY_MS = 60_000;

/** Collaborators of {@link consumeMailbox}. */
export interface ConsumerDeps {
  readonly bus: Pick<Bus, 'receive' | 'ack' | 'nack' | 'extend' | 'deadLetter'>;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * The bus's consumer (in the spirit of BullMQ's Worker): `concurrency` loops each wait for
 * `beforeReceive`, receive from `mailbox` under a lease, run `handler` while renewing the lease, and
 * settle the delivery as the handler decided (ack, nack through the retry policy, dead-letter, abandon,
 * or nothing when the handler settled it itself). Resolves when `signal` aborts or the bus closes, after
 * every running handler has finished.
 */
export async function consumeMailbox(
  deps: ConsumerDeps,
  mailbox: string,
  handler: ConsumeHandler,
  options: ConsumeOptions,
): Promise<void> {
  const loops = Array.from({ length: Math.max(1, options.concurrency ?? 1) }, () =>
    receiveLoop(deps, mailbox, handler, options),
  );
  await Promise.all(loops);
}

async function receiveLoop(
  deps: ConsumerDeps,
  mailbox: string,
  handler: ConsumeHandler,
  options: ConsumeOptions,
): Promise<void> {
  const log = deps.logger.child({ component: 'bus.consumer', mailbox });
  while (!options.signal.aborted) {
    const next = await nextDelivery(deps, mailbox, options, log);
    if (next === 'stop') return;
    if (next === null) continue;
    const { delivery } = next;
    const settlement = await handleOne(deps, next, handler, options, log);
    if (options.onSettled !== undefined) {
      await Promise.resolve()
        .then(() => options.onSettled?.(delivery, settlement))
        .catch((err: unknown) => log.error({ err, messageId: delivery.envelope.id }, 'onSettled failed'));
    }
  }
}

interface Claimed {
  readonly delivery: Delivery;
  /** The lease asked for, or undefined for the bus's default. */
  readonly leaseMs: number | undefined;
}

/**
 * Waits for `beforeReceive`, then receives one delivery. Resolves null when there is nothing yet (a
 * timeout, or a failure logged and paused after), 'stop' when the signal aborted or the bus closed.
 */
async function nextDelivery(
  deps: ConsumerDeps,
  mailbox: string,
  options: ConsumeOptions,
  log: Logger,
): Promise<Claimed | null | 'stop'> {
  const { signal } = options;
  try {
    await options.beforeReceive?.(signal);
  } catch (err) {
    if (signal.aborted) return 'stop';
    log.error({ err }, 'beforeReceive failed; trying again');
    await sleep(deps.clock, RECEIVE_ERROR_PAUSE_MS, signal);
    return null;
  }
  if (signal.aborted) return 'stop';
  try {
    const leaseMs = typeof options.leaseMs === 'function' ? options.leaseMs() : options.leaseMs;
    const delivery = await deps.bus.receive(mailbox, {
      timeoutMs: RECEIVE_WAIT_MS,
      ...(leaseMs === undefined ? {} : { leaseMs }),
      signal,
    });
    return delivery === null ? null : { delivery, leaseMs };
  } catch (err) {
    if (signal.aborted || isMusubiError(err, 'BUS_CLOSED')) return 'stop';
    log.error({ err }, 'receive failed; trying again');
    await sleep(deps.clock, RECEIVE_ERROR_PAUSE_MS, signal);
    return null;
  }
}

/** Runs the handler for one delivery under a renewed lease and settles it. */
async function handleOne(
  deps: ConsumerDeps,
  { delivery, leaseMs }: Claimed,
  handler: ConsumeHandler,
  options: ConsumeOptions,
  log: Logger,
): Promise<Settlement> {
  const work = new AbortController();
  const stop = (): void => work.abort(options.signal.reason);
  options.signal.addEventListener('abort', stop, { once: true });
  let lost: unknown;
  const keeper =
    options.autoExtend === false
      ? undefined
      : renewLease(deps, delivery, leaseMs ?? delivery.leaseUntil - deps.clock.now(), (err) => {
          lost = err;
          work.abort(err);
        });
  let verdict: ConsumeVerdict;
  try {
    verdict = (await handler(delivery, { signal: work.signal })) ?? { kind: 'ack' };
  } catch (err) {
    if (work.signal.aborted) verdict = { kind: 'abandon' };
    else {
      log.warn({ err, messageId: delivery.envelope.id }, 'handler failed; giving the message back');
      verdict = { kind: 'nack', reason: err instanceof Error ? err.message : String(err) };
    }
  } finally {
    keeper?.cancel();
    options.signal.removeEventListener('abort', stop);
  }
  // A handler that settled the delivery itself may have raced a renewal, which is then refused.
  if (lost !== undefined && verdict.kind !== 'settled') return { kind: 'lost', error: lost };
  try {
    return await settle(deps, delivery, verdict);
  } catch (err) {
    log.warn({ err, messageId: delivery.envelope.id }, 'could not settle the delivery');
    return { kind: 'lost', error: err };
  }
}

async function settle(deps: ConsumerDeps, delivery: Delivery, verdict: ConsumeVerdict): Promise<Settlement> {
  switch (verdict.kind) {
    case 'ack':
      await deps.bus.ack(delivery.deliveryId);
      return { kind: 'acked' };
    case 'nack': {
      const { reason, delayMs } = verdict;
      const outcome = await deps.bus.nack(delivery.deliveryId, {
        ...(reason === undefined ? {} : { reason }),
        ...(delayMs === undefined ? {} : { delayMs }),
      });
      return { kind: 'nacked', outcome };
    }
    case 'dead-letter':
      return {
        kind: 'dead-lettered',
        deadLetter: await deps.bus.deadLetter(delivery.deliveryId, verdict.reason),
      };
    case 'abandon':
      return { kind: 'abandoned' };
    case 'settled':
      return { kind: 'settled' };
  }
}

/**
 * Extends the delivery's lease every third of `leaseMs` (kept between 10 ms and 60 s) until cancelled. A
 * refusal (LEASE_EXPIRED, NOT_FOUND: someone else holds the message now; BUS_CLOSED) calls `onLost` and stops;
 * any other failure is retried at the next tick.
 */
function renewLease(
  deps: ConsumerDeps,
  delivery: Delivery,
  leaseMs: number,
  onLost: (err: unknown) => void,
): Timer {
  const every = Math.min(MAX_RENEW_EVERY_MS, Math.max(MIN_RENEW_EVERY_MS, Math.floor(leaseMs / 3)));
  let timer: Timer | undefined;
  let isCancelled = false;
  const tick = (): void => {
    deps.bus.extend(delivery.deliveryId, { leaseMs }).then(
      () => {
        if (!isCancelled) timer = deps.clock.setTimer(tick, every);
      },
      (err: unknown) => {
        if (isCancelled) return;
        if (
          isMusubiError(err, 'LEASE_EXPIRED') ||
          isMusubiError(err, 'NOT_FOUND') ||
          isMusubiError(err, 'BUS_CLOSED')
        ) {
          onLost(err);
          return;
        }
        deps.logger.warn({ err, messageId: delivery.envelope.id }, 'lease extension failed; trying again');
        timer = deps.clock.setTimer(tick, every);
      },
    );
  };
  timer = deps.clock.setTimer(tick, every);
  return {
    cancel: () => {
      isCancelled = true;
      timer?.cancel();
    },
  };
}
