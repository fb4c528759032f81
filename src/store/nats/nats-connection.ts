import { readFile } from 'node:fs/promises';
import {
  AuthorizationError,
  connect,
  credsAuthenticator,
  type ConnectionOptions,
  type NatsConnection,
} from '@nats-io/transport-node';
import { MusubiError } from '../../core/errors.js';
import type { NatsAuth, NatsLocation } from './nats-location.js';

/** First retry delay of the initial connection; doubles up to {@link CONNECT_BACKOFF_CAP_MS}. */
const CONNECT_BACKOFF_BASE_MS = 100;
const CONNECT_BACKOFF_CAP_MS = 2_000;
/** Longest single connection attempt. */
const CONNECT_ATTEMPT_MS = 2_000;
/** Once connected, wait this long (plus jitter) between reconnect attempts, forever. */
const RECONNECT_WAIT_MS = 250;
const PING_INTERVAL_MS = 10_000;

async function authOptions(auth: NatsAuth): Promise<Partial<ConnectionOptions>> {
  switch (auth.kind) {
    case 'none':
      return {};
    case 'token':
      return { token: auth.token };
    case 'user':
      return { user: auth.user, pass: auth.pass };
    case 'creds': {
      const creds = await readFile(auth.path).catch((err: unknown) => {
        throw new MusubiError('STORE_UNAVAILABLE', `NATS creds file ${auth.path} cannot be read`, {
          cause: err,
        });
      });
      return { authenticator: credsAuthenticator(new Uint8Array(creds)) };
    }
  }
}

function abortableDelay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Connects to the servers of `location`, retrying with exponential backoff (full jitter) for up to
 * `location.connectTimeoutMs`. Once connected the client reconnects by itself, forever, so a server
 * restart is survived. Rejects with STORE_UNAVAILABLE when the time runs out or authorization fails
 * (not retried), or with the signal's reason on abort. The caller closes the connection.
 */
export async function connectNats(
  location: NatsLocation,
  options: { readonly signal?: AbortSignal; readonly random?: () => number } = {},
): Promise<NatsConnection> {
  const random = options.random ?? Math.random;
  const deadline = Date.now() + location.connectTimeoutMs;
  const base: ConnectionOptions = {
    servers: [...location.servers],
    name: `musubi:${location.prefix}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: RECONNECT_WAIT_MS,
    reconnectJitter: RECONNECT_WAIT_MS,
    pingInterval: PING_INTERVAL_MS,
    // Every request would otherwise build two Error objects up front just for their stack traces
    // (about a tenth of the CPU of a send -> ack); failures are wrapped in MusubiErrors anyway.
    noAsyncTraces: true,
    ...(await authOptions(location.auth)),
  };
  let lastError: unknown;
  for (let attempt = 0; ; attempt++) {
    options.signal?.throwIfAborted();
    const remainingMs = deadline - Date.now();
    try {
      return await connect({ ...base, timeout: Math.max(100, Math.min(CONNECT_ATTEMPT_MS, remainingMs)) });
    } catch (err) {
      lastError = err;
      if (err instanceof AuthorizationError) break;
    }
    const backoffMs = Math.min(CONNECT_BACKOFF_CAP_MS, CONNECT_BACKOFF_BASE_MS * 2 ** attempt);
    const waitMs = Math.round(random() * backoffMs);
    if (Date.now() + waitMs >= deadline) break;
    await abortableDelay(waitMs, options.signal);
  }
  const reason = lastError instanceof Error ? lastError.message : String(lastError);
  throw new MusubiError(
    'STORE_UNAVAILABLE',
    `cannot reach NATS at ${location.servers.join(',')} within ${location.connectTimeoutMs} ms: ${reason}`,
    { cause: lastError, details: { servers: location.servers } },
  );
}
