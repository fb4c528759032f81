import { ENVELOPE_ID_PATTERN } from '../core/envelope.js';
import { MusubiError } from '../core/errors.js';

/** A delivery id the bus can look up; anything else names no delivery (NOT_FOUND). */
export function checkDeliveryId(deliveryId: unknown): string {
  if (typeof deliveryId !== 'string' || deliveryId.length === 0 || deliveryId.length > 300) {
    throw new MusubiError('NOT_FOUND', `no delivery ${JSON.stringify(deliveryId)}`);
  }
  return deliveryId;
}

/** An envelope id that could name a dead letter; anything else names none (NOT_FOUND). */
export function checkDeadLetterId(envelopeId: unknown): string {
  if (typeof envelopeId !== 'string' || !ENVELOPE_ID_PATTERN.test(envelopeId)) {
    throw new MusubiError('NOT_FOUND', `no dead letter ${JSON.stringify(envelopeId)}`);
  }
  return envelopeId;
}

/** `value` (or `fallback`) as a non-negative integer of milliseconds; USAGE_INVALID otherwise. */
export function checkDuration(name: string, value: number | undefined, fallback: number): number {
  const v = value ?? fallback;
  if (!Number.isInteger(v) || v < 0) {
    throw new MusubiError('USAGE_INVALID', `${name} must be a non-negative integer number of milliseconds`);
  }
  return v;
}
