import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { isMusubiError, MusubiError } from '../../core/errors.js';

/** True when a conditional publish failed because the subject moved on (a lost compare-and-set). */
export function isWrongLastSequence(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.StreamWrongLastSequence ||
      err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/**
 * Wraps a NATS client failure as STORE_UNAVAILABLE (timeouts, a closed or reconnecting connection,
 * no JetStream responders, API errors); musubi errors pass through unchanged.
 */
export function storeUnavailable(err: unknown, doing: string): MusubiError {
  if (isMusubiError(err)) return err;
  const reason = err instanceof Error ? err.message : String(err);
  return new MusubiError('STORE_UNAVAILABLE', `NATS store: ${doing} failed: ${reason}`, { cause: err });
}

/** Runs one NATS call, rethrowing its failure through {@link storeUnavailable}. */
export async function natsCall<T>(doing: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw storeUnavailable(err, doing);
  }
}
