import { readFile } from 'node:fs/promises';
import {
  AuthorizationError,
  connect,
  credsAuthenticator,
  nkeyAuthenticator,
  type ConnectionOptions,
  type NatsConnection,
} from '@nats-io/transport-node';
import { MusubiError } from '../../core/errors.js';
import type { NatsAuth, NatsLocation, NatsTls } from './nats-location.js';

/** First retry delay of the initial connection; doubles up to {@link CONNECT_BACKOFF_CAP_MS}. */
const CONNECT_BACKOFF_BASE_MS = 100;
const CONNECT_BACKOFF_CAP_MS = 2_000;
/** Longest single connection attempt. */
const CONNECT_ATTEMPT_MS = 2_000;
/** Once connected, wait this long (plus jitter) between reconnect attempts, forever. */
const RECONNECT_WAIT_MS = 250;
/**
 * The client pings this often and gives a connection up after two unanswered pings, then reconnects
 * (every attempt bounded by CONNECT_ATTEMPT_MS). A connection cut off without a word (a network
 * partition) is so noticed within 2-3 s instead of riding out TCP's retransmission backoff: a hub
 * partitioned for 10 s resumed 8.5 s after the link healed with 10 s pings, 0.2 s with these.
 */
const PING_INTERVAL_MS = 1_000;

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
    case 'nkey':
      return { authenticator: nkeyAuthenticator(await nkeySeed(auth)) };
  }
}

/** The seed of an nkey login, from its file or its environment variable; never shown in an error. */
async function nkeySeed(auth: Extract<NatsAuth, { kind: 'nkey' }>): Promise<Uint8Array> {
  let text: string;
  if ('seedFile' in auth) {
    text = await readFile(auth.seedFile, 'utf8').catch((err: unknown) => {
      throw new MusubiError('STORE_UNAVAILABLE', `NATS nkey seed file ${auth.seedFile} cannot be read`, {
        cause: err,
      });
    });
  } else {
    const value = process.env[auth.seedEnv];
    if (value === undefined || value.trim() === '') {
      throw new MusubiError(
        'STORE_UNAVAILABLE',
        `NATS nkey seed: environment variable ${auth.seedEnv} is not set (the store URL names it in nkeyEnv)`,
      );
    }
    text = value;
  }
  const seed = text.trim();
  const where = 'seedFile' in auth ? `file ${auth.seedFile}` : `environment variable ${auth.seedEnv}`;
  // A user seed: "SU" and 56 more base32 characters. Checked here so a wrong value fails before connecting.
  if (!/^SU[A-Z2-7]{56}$/.test(seed)) {
    throw new MusubiError('STORE_UNAVAILABLE', `NATS nkey seed in ${where} is not a user seed (SU...)`);
  }
  return new TextEncoder().encode(seed);
}

function tlsOptions(tls: NatsTls | undefined): Partial<ConnectionOptions> {
  if (tls === undefined) return {};
  return {
    tls: {
      ...(tls.caFile !== undefined && { caFile: tls.caFile }),
      ...(tls.certFile !== undefined && { certFile: tls.certFile }),
      ...(tls.keyFile !== undefined && { keyFile: tls.keyFile }),
      // Passed through to node:tls: the name the server's certificate must carry.
      ...(tls.servername !== undefined && { servername: tls.servername }),
    } as NonNullable<ConnectionOptions['tls']>,
  };
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
    ...tlsOptions(location.tls),
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
