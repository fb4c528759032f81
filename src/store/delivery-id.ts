import { ENVELOPE_ID_PATTERN } from '../core/envelope.js';
import { MusubiError } from '../core/errors.js';
import { MAILBOX_NAME_PATTERN } from '../core/names.js';

/**
 * The parts of a delivery id (`<mailbox>:<envelopeId>:<seq>:<attempt>`). `seq` is the message's place
 * in its store (the sequence its `sent` or `requeued` write took): a store never reuses one, and a
 * message keeps its seq until it is requeued from the dead letters, which resets `attempt` and gives a
 * new seq. So the pair (seq, attempt) names one delivery forever — across retries from the dead letters,
 * restarts, and an id sent again after an ack — and a holder of an older one can never settle a newer one.
 */
export interface DeliveryRef {
  readonly mailbox: string;
  readonly envelopeId: string;
  readonly seq: number;
  readonly attempt: number;
}

// Mailbox names and envelope ids cannot contain ':', so the four parts split unambiguously.
const SEQ_PATTERN = /^[1-9][0-9]{0,14}$/;
const ATTEMPT_PATTERN = /^[1-9][0-9]{0,8}$/;

/** Builds the delivery id naming one delivery (one attempt at one place) of one message. */
export function formatDeliveryId(ref: DeliveryRef): string {
  return `${ref.mailbox}:${ref.envelopeId}:${ref.seq}:${ref.attempt}`;
}

/**
 * Splits a delivery id into its parts. Throws `NOT_FOUND` for anything malformed: a delivery id that
 * cannot have been issued names no delivery, and callers treat it like one that has gone.
 */
export function parseDeliveryId(deliveryId: string): DeliveryRef {
  const parts = deliveryId.split(':');
  const [mailbox, envelopeId, seq, attempt] = parts;
  if (
    parts.length !== 4 ||
    mailbox === undefined ||
    envelopeId === undefined ||
    seq === undefined ||
    attempt === undefined ||
    !MAILBOX_NAME_PATTERN.test(mailbox) ||
    !ENVELOPE_ID_PATTERN.test(envelopeId) ||
    !SEQ_PATTERN.test(seq) ||
    !ATTEMPT_PATTERN.test(attempt)
  ) {
    throw new MusubiError('NOT_FOUND', 'no such delivery: malformed delivery id', {
      details: { deliveryId: deliveryId.slice(0, 300) },
    });
  }
  return { mailbox, envelopeId, seq: Number(seq), attempt: Number(attempt) };
}

/** Where the live message a delivery ref points at stands now, as a store read it. */
export interface LeaseState {
  readonly seq: number;
  readonly attempt: number;
  readonly isLeased: boolean;
  /** When the lease ends (meaningful while `isLeased`). */
  readonly leaseUntil: number;
}

/**
 * Why `ref` does not hold the live lease of `current` (its mailbox's live message with the same
 * envelope id, undefined when there is none or it is dead) at `now`, or null when it does:
 * NOT_FOUND for a delivery that is gone or was never issued, LEASE_EXPIRED for one that was
 * superseded (a later attempt, a requeued or re-sent message) or whose lease ended.
 */
export function leaseProblem(
  ref: DeliveryRef,
  current: LeaseState | undefined,
  now: number,
): MusubiError | null {
  const name = formatDeliveryId(ref);
  if (
    current === undefined ||
    ref.seq > current.seq ||
    (ref.seq === current.seq && ref.attempt > current.attempt)
  ) {
    return new MusubiError('NOT_FOUND', `no such delivery: ${name}`);
  }
  if (
    ref.seq < current.seq ||
    ref.attempt < current.attempt ||
    !current.isLeased ||
    current.leaseUntil <= now
  ) {
    return new MusubiError('LEASE_EXPIRED', `the lease of delivery ${name} has ended`);
  }
  return null;
}
