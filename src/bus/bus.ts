import type { Clock } from '../core/clock.js';
import { createEnvelope, ENVELOPE_ID_PATTERN, type Envelope } from '../core/envelope.js';
import { MusubiError } from '../core/errors.js';
import type { BusEvent, StoredEvent } from '../core/events.js';
import type { IdGenerator } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import { promiseTry } from '../core/promise-try.js';
import { assertKvKey, assertMailboxName } from '../core/names.js';
import { parseDeliveryId } from '../store/delivery-id.js';
import type { DeadLetter, Delivery, KvWriteOptions, Store } from '../store/store.js';
import type { Bus, KvState, MailWatch, NackOutcome, ReceiveOptions, SendResult } from './bus.types.js';
import { checkDeadLetterId, checkDeliveryId, checkDuration } from './bus-arguments.js';
import { consumeMailbox } from './consumer.js';
import { MailWatchers, createMailWatch } from './mail-watch.js';
import { MailboxWaiters } from './mailbox-waiters.js';
import { backoffDelayMs, type RetryConfig } from './retry-policy.js';

/** Default wait of a receive that names no timeout. */
export const DEFAULT_RECEIVE_TIMEOUT_MS = 30_000;

/** Bus settings (the `bus` section of musubi.yaml). */
export interface BusConfig {
  readonly leaseMs: number;
  readonly retry: RetryConfig;
}

/** Collaborators and settings of {@link createBus}. */
export interface CreateBusOptions {
  readonly store: Store;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly logger: Logger;
  readonly config: BusConfig;
  /** Source of jitter in [0, 1); Math.random by default. */
  readonly random?: () => number;
}

/**
 * Creates a bus over `store`. Receives are woken by store notifications (in-process immediately; other
 * processes' writes as the store detects them) and by one timer per mailbox for delays and lease
 * expiries — never by an in-process polling loop. The bus does not own the store: close it yourself.
 */
export function createBus(options: CreateBusOptions): Bus {
  const { store, clock, ids, config } = options;
  const random = options.random ?? Math.random;
  const log = options.logger;
  const waiters = new MailboxWaiters({ clock });
  const watchers = new MailWatchers();
  const unsubscribe = store.onAvailable((mailbox) => {
    waiters.notify(mailbox);
    watchers.notify(mailbox);
  });
  let isClosed = false;
  const watches = new Set<MailWatch>();
  let closing: Promise<void> | undefined;

  const assertOpen = (): void => {
    if (isClosed) throw new MusubiError('BUS_CLOSED', 'the bus is closed');
  };
  /** The checked name of a mailbox a verb works on, once the bus is known to be open. */
  const openMailbox = (name: string): string => {
    assertOpen();
    return assertMailboxName(name);
  };

  const escalate = async (mailbox: string, envelope: Envelope, reason: string): Promise<void> => {
    log.warn(
      { mailbox, messageId: envelope.id, attempts: envelope.attempt, reason },
      'message dead-lettered',
    );
    await store.appendEvent({
      type: 'escalation',
      mailbox,
      messageId: envelope.id,
      attempts: envelope.attempt,
      reason,
    });
  };

  /** Claims one message, dead-lettering any whose attempts ran out through expired leases. */
  const claimUsable = async (mailbox: string, leaseMs: number): Promise<Delivery | null> => {
    for (;;) {
      const delivery = await store.claim(mailbox, { leaseMs });
      if (delivery === null || delivery.envelope.attempt <= config.retry.maxAttempts) return delivery;
      const reason = `lease expired ${config.retry.maxAttempts} times without ack`;
      await store.deadLetter(delivery.deliveryId, { reason });
      await escalate(mailbox, delivery.envelope, reason);
    }
  };

  const receive = async (mailboxName: string, opts: ReceiveOptions = {}): Promise<Delivery | null> => {
    const mailbox = openMailbox(mailboxName);
    const timeoutMs = checkDuration('timeoutMs', opts.timeoutMs, DEFAULT_RECEIVE_TIMEOUT_MS);
    const leaseMs = checkDuration('leaseMs', opts.leaseMs, config.leaseMs);
    opts.signal?.throwIfAborted();
    const deadline = clock.now() + timeoutMs;
    let isWoken = false;
    for (;;) {
      if (opts.signal?.aborted === true) {
        // Woken but aborted before claiming: hand the wake-up on, or a receiver parked behind this
        // one might wait for a message nobody is claiming.
        if (isWoken) waiters.notify(mailbox);
        opts.signal.throwIfAborted();
      }
      waiters.enter(mailbox);
      let next: Delivery | null | 'park' | 'again';
      try {
        next = await claimOrPark(mailbox, leaseMs, deadline);
      } catch (err) {
        waiters.leave(mailbox);
        if (isWoken) waiters.notify(mailbox); // a wake-up this receiver cannot use: hand it on
        throw err;
      }
      // Asked while still busy, so a notification missed during the due-time read counts too.
      const isMissed = next === 'park' && waiters.takeMissed(mailbox);
      // Leaving and parking in one synchronous step: no notification can fall between them.
      waiters.leave(mailbox);
      if (next === 'again' || isMissed) continue;
      if (next === 'park') {
        isWoken = await waiters.wait(mailbox, deadline, opts.signal);
        if (!isWoken && clock.now() >= deadline) return isClosed ? null : claimUsable(mailbox, leaseMs);
        continue;
      }
      // Pass the baton: there may be more messages for the next parked receiver.
      if (next !== null && waiters.hasWaiters(mailbox)) waiters.notify(mailbox);
      return next;
    }
  };

  /**
   * One claim for a receiver that is busy in `waiters`: the delivery, null when the receive is over,
   * 'again' when a notification nobody was woken for came meanwhile (it may be for a message no one
   * else will claim), else 'park' (with the mailbox's next due time scheduled).
   */
  const claimOrPark = async (
    mailbox: string,
    leaseMs: number,
    deadline: number,
  ): Promise<Delivery | null | 'park' | 'again'> => {
    const delivery = await claimUsable(mailbox, leaseMs);
    if (delivery !== null || isClosed || clock.now() >= deadline) return delivery;
    if (waiters.takeMissed(mailbox)) return 'again';
    const dueAt = await store.nextDueAt(mailbox);
    if (dueAt !== null && dueAt < deadline) waiters.scheduleDue(mailbox, dueAt);
    return 'park';
  };

  const nack = async (
    deliveryId: string,
    opts: { readonly delayMs?: number; readonly reason?: string } = {},
  ): Promise<NackOutcome> => {
    assertOpen();
    const id = checkDeliveryId(deliveryId);
    const { attempt } = parseDeliveryId(id);
    if (attempt >= config.retry.maxAttempts) {
      const reason = opts.reason ?? `failed ${attempt} times`;
      const deadLetter = await store.deadLetter(id, { reason });
      await escalate(deadLetter.mailbox, deadLetter.envelope, reason);
      return { outcome: 'dead-lettered', deadLetter };
    }
    const delayMs =
      opts.delayMs === undefined
        ? backoffDelayMs(config.retry, attempt, random)
        : checkDuration('delayMs', opts.delayMs, 0);
    await store.nack(id, { delayMs });
    return { outcome: 'retry', delayMs };
  };

  const kv: KvState = {
    async kvGet(key) {
      assertOpen();
      return store.kvGet(assertKvKey(key));
    },
    async kvSet(key, value, o?: KvWriteOptions) {
      assertOpen();
      return store.kvSet(assertKvKey(key), value, o);
    },
    async kvDelete(key, o?: KvWriteOptions) {
      assertOpen();
      return store.kvDelete(assertKvKey(key), o);
    },
    async kvList(prefix) {
      assertOpen();
      return store.kvList(prefix);
    },
    kvWatch(prefix, o) {
      assertOpen();
      return store.kvWatch(prefix, o);
    },
  };

  const envelopeDeps = { ids, clock };
  // The hot verbs (send, take, peek, count) check their arguments and hand back the store's promise
  // (promiseTry): no async frame of their own. A failed check still rejects, never throws.
  const bus: Bus = {
    writesInOrder: store.writesInOrder,
    send(input): Promise<SendResult> {
      return promiseTry(() => {
        assertOpen();
        // Name errors get their own code before the envelope schema sees them.
        assertMailboxName(input.to);
        assertMailboxName(input.from);
        const envelope = createEnvelope(input, envelopeDeps);
        return store.append(envelope.to, envelope).then((r) => ({ envelope, isDuplicate: r.isDuplicate }));
      });
    },
    async broadcast(input, to): Promise<SendResult[]> {
      assertOpen();
      const mailboxes = to.map(assertMailboxName);
      const first = mailboxes[0];
      if (first === undefined) return [];
      const template = createEnvelope({ ...input, to: first }, { ids, clock });
      const results: SendResult[] = [];
      for (const mailbox of new Set(mailboxes)) {
        const envelope = { ...template, to: mailbox };
        const { isDuplicate } = await store.append(mailbox, envelope);
        results.push({ envelope, isDuplicate });
      }
      return results;
    },
    receive,
    async ack(deliveryId): Promise<void> {
      assertOpen();
      await store.ack(checkDeliveryId(deliveryId));
    },
    take(mailboxName, envelopeId): Promise<boolean> {
      return promiseTry(() => {
        const mailbox = openMailbox(mailboxName);
        // An id the envelope schema would reject was never sent, so there is nothing to take.
        if (typeof envelopeId !== 'string' || !ENVELOPE_ID_PATTERN.test(envelopeId)) return false;
        return store.take(mailbox, envelopeId);
      });
    },
    nack,
    async extend(deliveryId, opts = {}): Promise<Delivery> {
      assertOpen();
      const leaseMs = checkDuration('leaseMs', opts.leaseMs, config.leaseMs);
      return store.extend(checkDeliveryId(deliveryId), { leaseMs });
    },
    async deadLetter(deliveryId, reason): Promise<DeadLetter> {
      assertOpen();
      const letter = await store.deadLetter(checkDeliveryId(deliveryId), { reason });
      await escalate(letter.mailbox, letter.envelope, reason);
      return letter;
    },
    peek(mailbox, opts) {
      return promiseTry(() => {
        const name = openMailbox(mailbox);
        const limit = opts?.limit;
        if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0)) {
          throw new MusubiError('USAGE_INVALID', `peek limit must be a non-negative integer, got ${limit}`);
        }
        return store.peek(name, opts);
      });
    },
    count(mailbox) {
      return promiseTry(() => store.count(openMailbox(mailbox)));
    },
    async listMailboxes() {
      assertOpen();
      return store.listMailboxes();
    },
    listDeadLetters: async (opts = {}) => {
      assertOpen();
      if (opts.mailbox !== undefined) assertMailboxName(opts.mailbox);
      return store.listDeadLetters(opts);
    },
    async consume(mailboxName, handler, consumeOptions) {
      const mailbox = openMailbox(mailboxName);
      return consumeMailbox({ bus, clock, logger: log }, mailbox, handler, consumeOptions);
    },
    watchMail(mailboxName) {
      assertOpen();
      const watch = createMailWatch({
        store,
        watchers,
        clock,
        mailbox: assertMailboxName(mailboxName),
      });
      watches.add(watch);
      const close = (): void => {
        watches.delete(watch);
        watch.close();
      };
      return { next: (nextOptions) => watch.next(nextOptions), close, [Symbol.dispose]: close };
    },
    async retryDeadLetter(envelopeId) {
      assertOpen();
      return store.requeueDeadLetter(checkDeadLetterId(envelopeId));
    },
    async discardDeadLetter(envelopeId) {
      assertOpen();
      return store.discardDeadLetter(checkDeadLetterId(envelopeId));
    },
    kv,
    async publish(event: BusEvent): Promise<StoredEvent> {
      assertOpen();
      return store.appendEvent(event);
    },
    async readEvents(opts) {
      assertOpen();
      return store.readEvents(opts);
    },
    async lastEventCursor() {
      assertOpen();
      return store.lastEventCursor();
    },
    events(opts) {
      assertOpen();
      return store.followEvents(opts);
    },
    close(): Promise<void> {
      closing ??= Promise.resolve().then(() => {
        isClosed = true;
        unsubscribe();
        waiters.close();
        for (const watch of watches) watch.close();
        watches.clear();
      });
      return closing;
    },
    [Symbol.asyncDispose]: () => bus.close(),
  };
  return bus;
}
