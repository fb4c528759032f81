import { ENVELOPE_ID_PATTERN } from '../core/envelope.js';
import { MusubiError } from '../core/errors.js';
import { MAILBOX_NAME_PATTERN } from '../core/names.js';

/** The parts of a delivery id (`<mailbox>:<envelopeId>:<attempt>`). */
export interface DeliveryRef {
  readonly mailbox: string;
  readonly envelopeId: string;
  readonly attempt: number;
}

// Mailbox names and envelope ids cannot contain ':', so the three parts split unambiguously.
const ATTEMPT_PATTERN = /^[1-9][0-9]{0,8}$/;

/** Builds the delivery id naming one delivery (one attempt) of one message. */
export function formatDeliveryId(ref: DeliveryRef): string {
  return `${ref.mailbox}:${ref.envelopeId}:${ref.attempt}`;
}

/**
 * Splits a delivery id into its parts. Throws `NOT_FOUND` for anything malformed: a delivery id that
 * cannot have been issued names no delivery, and callers treat it like one that has gone.
 */
export function parseDeliveryId(deliveryId: string): DeliveryRef {
  const parts = deliveryId.split(':');
  const [mailbox, envelopeId, attempt] = parts;
  if (
    parts.length !== 3 ||
    mailbox === undefined ||
    envelopeId === undefined ||
    attempt === undefined ||
    !MAILBOX_NAME_PATTERN.test(mailbox) ||
    !ENVELOPE_ID_PATTERN.test(envelopeId) ||
    !ATTEMPT_PATTERN.test(attempt)
  ) {
    throw new MusubiError('NOT_FOUND', 'no such delivery: malformed delivery id', {
      details: { deliveryId: deliveryId.slice(0, 300) },
    });
  }
  return { mailbox, envelopeId, attempt: Number(attempt) };
}
