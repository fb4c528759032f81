import { MusubiError } from '../../core/errors.js';

/** Namespace used when a NATS store URL names no `prefix`. */
export const DEFAULT_NATS_PREFIX = 'musubi';
/** How long `musubi` keeps retrying the first connection before it reports STORE_UNAVAILABLE. */
export const DEFAULT_NATS_CONNECT_TIMEOUT_MS = 10_000;
/** Newest journal records (message changes and events) kept before old ones are trimmed. */
export const DEFAULT_NATS_RETAIN = 100_000;

const PREFIX_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
const HOST_PORT_PATTERN = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::[0-9]{1,5})?$/;
const OPTION_NAMES = [
  'prefix',
  'token',
  'creds',
  'nkey',
  'nkeyEnv',
  'tls',
  'ca',
  'cert',
  'key',
  'servername',
  'connectTimeoutMs',
  'retain',
  'replicas',
] as const;
const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SERVER_NAME_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/;
/** JetStream's own limit on a stream's replicas. */
export const MAX_NATS_REPLICAS = 5;

/**
 * How to authenticate: none, a token, a user and password, a NATS `.creds` file (JWT + nkey seed), or
 * an nkey seed read from a file or from an environment variable (named here, never given inline).
 */
export type NatsAuth =
  | { readonly kind: 'none' }
  | { readonly kind: 'token'; readonly token: string }
  | { readonly kind: 'user'; readonly user: string; readonly pass: string }
  | { readonly kind: 'creds'; readonly path: string }
  | { readonly kind: 'nkey'; readonly seedFile: string }
  | { readonly kind: 'nkey'; readonly seedEnv: string };

/**
 * TLS to the servers (required when present): a CA bundle to trust instead of the system's, a client
 * certificate and key for servers that verify clients, and the name to check the server's certificate
 * against (needed when the URL names servers by IP address).
 */
export interface NatsTls {
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
  readonly servername?: string;
}

/** A parsed `nats://` store URL. */
export interface NatsLocation {
  readonly kind: 'nats';
  /** `host:port` seeds of one server or cluster. */
  readonly servers: readonly string[];
  /** Namespace of every stream, bucket and subject the store uses; hubs sharing a team share it. */
  readonly prefix: string;
  readonly auth: NatsAuth;
  /** Present: TLS is required (`tls://`, `?tls=1`, or any of `ca`, `cert`, `key`, `servername`). */
  readonly tls?: NatsTls;
  readonly connectTimeoutMs: number;
  readonly retain: number;
  /**
   * Replicas of the journal stream and the KV bucket (1-5). Absent: 3 when the cluster has at least 3
   * servers, else 1 (see resolveReplicas).
   */
  readonly replicas?: number;
}

function invalid(url: string, why: string): MusubiError {
  return new MusubiError('STORE_URL_INVALID', `store URL ${redactNatsUrl(url)}: ${why}`);
}

function positiveInt(url: string, name: string, raw: string | null, fallback: number): number {
  if (raw === null) return fallback;
  const value = Number(raw);
  if (!/^[0-9]{1,12}$/.test(raw) || value < 1) throw invalid(url, `${name} must be a positive integer`);
  return value;
}

function fileOption(url: string, params: URLSearchParams, name: string): string | undefined {
  const value = params.get(name);
  if (value === null) return undefined;
  if (value === '' || value.includes('\0')) throw invalid(url, `${name} must name a file`);
  return value;
}

function parseAuth(url: string, userinfo: string, params: URLSearchParams): NatsAuth {
  const token = params.get('token');
  const creds = fileOption(url, params, 'creds');
  const nkey = fileOption(url, params, 'nkey');
  const nkeyEnv = params.get('nkeyEnv');
  const given = [userinfo !== '', token !== null, creds !== undefined, nkey !== undefined, nkeyEnv !== null];
  if (given.filter(Boolean).length > 1) {
    throw invalid(url, 'give one of user:pass@, token@, ?token=, ?creds=, ?nkey= or ?nkeyEnv=');
  }
  if (creds !== undefined) return { kind: 'creds', path: creds };
  if (nkey !== undefined) return { kind: 'nkey', seedFile: nkey };
  if (nkeyEnv !== null) {
    if (!ENV_NAME_PATTERN.test(nkeyEnv)) throw invalid(url, 'nkeyEnv must name an environment variable');
    return { kind: 'nkey', seedEnv: nkeyEnv };
  }
  if (token !== null) return { kind: 'token', token };
  if (userinfo === '') return { kind: 'none' };
  const colon = userinfo.indexOf(':');
  if (colon < 0) return { kind: 'token', token: decodeURIComponent(userinfo) };
  return {
    kind: 'user',
    user: decodeURIComponent(userinfo.slice(0, colon)),
    pass: decodeURIComponent(userinfo.slice(colon + 1)),
  };
}

/**
 * Parses `nats://` or `tls://[user:pass@|token@]host[:port][,host[:port]...]` with the options
 * `prefix`, `token`, `creds`, `nkey`, `nkeyEnv`, `tls`, `ca`, `cert`, `key`, `servername`,
 * `connectTimeoutMs`, `retain`, `replicas` (src/store/NATS-MAPPING.md).
 * Port defaults to 4222. Throws STORE_URL_INVALID (with credentials redacted) for anything malformed.
 */
export function parseNatsUrl(url: string): NatsLocation {
  const scheme = url.startsWith('nats://') ? 'nats://' : url.startsWith('tls://') ? 'tls://' : null;
  if (scheme === null) throw invalid(url, 'a NATS store URL starts with nats:// (or tls://)');
  const rest = url.slice(scheme.length);
  const queryAt = rest.indexOf('?');
  const authority = queryAt < 0 ? rest : rest.slice(0, queryAt);
  const params = new URLSearchParams(queryAt < 0 ? '' : rest.slice(queryAt + 1));
  for (const key of params.keys()) {
    if (!(OPTION_NAMES as readonly string[]).includes(key)) {
      throw invalid(url, `unknown option ${JSON.stringify(key)} (known: ${OPTION_NAMES.join(', ')})`);
    }
  }
  const at = authority.lastIndexOf('@');
  const userinfo = at < 0 ? '' : authority.slice(0, at);
  const hosts = (at < 0 ? authority : authority.slice(at + 1)).replace(/\/$/, '');
  const servers = hosts.split(',');
  if (servers.some((s) => !HOST_PORT_PATTERN.test(s))) {
    throw invalid(url, 'expected host[:port] (comma-separated for a cluster)');
  }
  const prefix = params.get('prefix') ?? DEFAULT_NATS_PREFIX;
  if (!PREFIX_PATTERN.test(prefix)) throw invalid(url, `prefix must match ${PREFIX_PATTERN.source}`);
  return {
    kind: 'nats',
    servers: servers.map((s) => (/:[0-9]+$/.test(s) ? s : `${s}:4222`)),
    prefix,
    auth: parseAuth(url, userinfo, params),
    ...tlsOption(url, params, scheme === 'tls://'),
    connectTimeoutMs: positiveInt(
      url,
      'connectTimeoutMs',
      params.get('connectTimeoutMs'),
      DEFAULT_NATS_CONNECT_TIMEOUT_MS,
    ),
    retain: positiveInt(url, 'retain', params.get('retain'), DEFAULT_NATS_RETAIN),
    ...replicasOption(url, params.get('replicas')),
  };
}

function tlsOption(url: string, params: URLSearchParams, isTlsScheme: boolean): { tls?: NatsTls } {
  const flag = params.get('tls');
  if (flag !== null && !['1', 'true', '0', 'false'].includes(flag)) throw invalid(url, 'tls must be 1 or 0');
  const caFile = fileOption(url, params, 'ca');
  const certFile = fileOption(url, params, 'cert');
  const keyFile = fileOption(url, params, 'key');
  const servername = params.get('servername') ?? undefined;
  if (servername !== undefined && !SERVER_NAME_PATTERN.test(servername)) {
    throw invalid(url, 'servername must be a host name');
  }
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw invalid(url, 'a client certificate needs both cert= and key=');
  }
  const isAsked = isTlsScheme || flag === '1' || flag === 'true';
  const hasSettings = [caFile, certFile, servername].some((v) => v !== undefined);
  if ((flag === '0' || flag === 'false') && (isTlsScheme || hasSettings)) {
    throw invalid(url, 'tls=0 contradicts tls:// or the ca, cert, key and servername options');
  }
  if (!isAsked && !hasSettings) return {};
  return {
    tls: {
      ...(caFile !== undefined && { caFile }),
      ...(certFile !== undefined && { certFile }),
      ...(keyFile !== undefined && { keyFile }),
      ...(servername !== undefined && { servername }),
    },
  };
}

function replicasOption(url: string, raw: string | null): { replicas?: number } {
  if (raw === null) return {};
  const replicas = positiveInt(url, 'replicas', raw, 1);
  if (replicas > MAX_NATS_REPLICAS) throw invalid(url, `replicas must be 1-${MAX_NATS_REPLICAS}`);
  return { replicas };
}

/**
 * The replica count a store opens its streams with: the one asked for, else 3 when the cluster it
 * connected to has at least 3 servers (`clusterSize`, from the server's INFO), else 1.
 */
export function resolveReplicas(asked: number | undefined, clusterSize: number): number {
  return asked ?? (clusterSize >= 3 ? 3 : 1);
}

/**
 * The URL (of any scheme) with user info and token, pass, password or secret parameters replaced by
 * `***`, safe for messages and logs.
 */
export function redactNatsUrl(url: string): string {
  return url
    .replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^@/?]*@/, '$1***@')
    .replace(/([?&](?:token|pass|password|secret)=)[^&]*/gi, '$1***');
}
