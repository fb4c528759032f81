import { JetStreamApiCodes, JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
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

/** JetStream's code for "stream is offline" (its servers are down or cut off). */
const STREAM_OFFLINE = 10118;

/**
 * A publish nobody answers: JetStream has no responder for the subject (yet), which the client reports
 * as JetStreamNotEnabled ("jetstream is not enabled", not exported by @nats-io/jetstream).
 */
function isNoResponders(err: unknown): boolean {
  return (
    err instanceof Error &&
    (err.name === 'JetStreamNotEnabled' ||
      /\b(?:jetstream is not enabled|no responders)\b/i.test(err.message))
  );
}

/** What a stream's unavailability looks like from a client: no responders, or a request that timed out. */
function isUnanswered(err: unknown): boolean {
  return (
    isNoResponders(err) ||
    (err instanceof Error && (err.name === 'TimeoutError' || /\btimeout\b/i.test(err.message)))
  );
}

/**
 * JetStream's code for "JetStream system temporarily unavailable": the cluster has no metadata leader
 * (it is electing one).
 */
const CLUSTER_NOT_AVAILABLE = 10008;
/**
 * How long {@link streamUnavailable} keeps asking about the stream while nobody answers that question
 * either: when the lost server was also the cluster's metadata leader, the rest elect a new one within
 * seconds, and only then can they say the stream is offline. A question already asked runs to its own
 * timeout ({@link DIAGNOSIS_REQUEST_MS}).
 */
const DIAGNOSIS_WAIT_MS = 8_000;
/** The pause between two tries of {@link untilAnswered}. */
const RETRY_MS = 100;

/**
 * What looks into a stream nobody answered: a manager whose requests time out after
 * {@link DIAGNOSIS_REQUEST_MS} (a question asked during an election must not wait the whole request
 * timeout), and the server the connection is on now (undefined while it has none: NATS itself is away,
 * and there is nothing to ask).
 */
export interface StreamDiagnosis {
  readonly jsm: JetStreamManager;
  readonly server: () => string | undefined;
}

/** The request timeout of {@link StreamDiagnosis.jsm}. */
export const DIAGNOSIS_REQUEST_MS = 1_000;

/**
 * {@link storeUnavailable}, except that a call on `stream` that nobody answered is explained: JetStream
 * is asked about the stream, and when the stream is offline or has no leader the error says so (which
 * server was asked, and that more replicas survive a lost server) instead of JetStream's "not enabled".
 * While that question goes unanswered too (the cluster is electing a new metadata leader), it is asked
 * again for up to {@link DIAGNOSIS_WAIT_MS}; if it still is then, JetStream itself is asked (for as long
 * again), and once it answers, the stream's servers are the silent ones and the error says that.
 */
export async function streamUnavailable(
  err: unknown,
  doing: string,
  stream: string,
  diagnosis: StreamDiagnosis,
): Promise<MusubiError> {
  const plain = storeUnavailable(err, doing);
  if (!isUnanswered(err) || diagnosis.server() === undefined) return plain;
  const why = await whyStreamUnavailable(stream, diagnosis, Date.now());
  const server = diagnosis.server();
  if (why === undefined || server === undefined) return plain;
  return new MusubiError(
    'STORE_UNAVAILABLE',
    `NATS store: ${doing} failed: stream ${stream} ${why} (asked ${server}). JetStream itself is ` +
      'up; the store works again when those servers are back, and a stream with 3 replicas (replicas=3) ' +
      'survives losing one',
    { cause: err, details: { stream, server } },
  );
}

/**
 * Runs `step` again while nobody answers it (a timeout, "no responders", which the client reports as
 * "jetstream is not enabled", or a cluster electing its metadata leader), until `deadline` or until
 * `isWorthIt` turns false: a JetStream cluster that just formed, several hubs creating the same
 * replicated stream at once (seen with three hubs starting together on a fresh 3-server cluster), a
 * stream just created whose subjects have not reached a leader yet, a cluster that lost its leader.
 */
export async function untilAnswered<T>(
  step: () => Promise<T>,
  deadline: number,
  isWorthIt: () => boolean = () => true,
): Promise<T> {
  for (;;) {
    try {
      return await step();
    } catch (err) {
      if (!isAnswerPending(err) || Date.now() > deadline || !isWorthIt()) throw err;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}

/** Nobody answered yet: {@link isUnanswered} (itself or its cause), or a cluster electing its metadata leader. */
function isAnswerPending(err: unknown): boolean {
  return (
    isUnanswered(err) ||
    (err instanceof Error && isUnanswered(err.cause)) ||
    (err instanceof JetStreamApiError && err.code === CLUSTER_NOT_AVAILABLE)
  );
}

/** Why `stream` takes no writes (offline, no leader, silent), or undefined when JetStream says neither. */
async function whyStreamUnavailable(
  stream: string,
  { jsm, server }: StreamDiagnosis,
  started: number,
): Promise<string | undefined> {
  // Our own connection dropping meanwhile would be what nobody answered, not the stream.
  const isConnected = (): boolean => server() !== undefined;
  try {
    const info = await untilAnswered(
      () => jsm.streams.info(stream),
      started + DIAGNOSIS_WAIT_MS,
      isConnected,
    );
    if (info.cluster === undefined || info.cluster.leader !== undefined) return undefined;
    return 'has no leader: too few of the servers holding its replicas are reachable (no quorum)';
  } catch (infoErr) {
    if (infoErr instanceof JetStreamApiError && infoErr.code === STREAM_OFFLINE)
      return 'is offline: the servers holding it are down or cut off';
    if (!isAnswerPending(infoErr) || !isConnected()) return undefined;
  }
  // A server that died without leaving the cluster (killed, cut off) is not reported offline for a long
  // while: once JetStream itself answers (a lost metadata leader is replaced), the stream's own servers
  // are the silent ones.
  const isJetStreamUp = await untilAnswered(
    () => jsm.getAccountInfo(),
    started + 2 * DIAGNOSIS_WAIT_MS,
    isConnected,
  ).then(
    () => true,
    () => false,
  );
  return isJetStreamUp ? 'does not answer: the servers holding it are down or cut off' : undefined;
}
