import { createHash, timingSafeEqual } from 'node:crypto';
import { isLoopbackHost } from '../../core/config.schema.js';
import { MusubiError } from '../../core/errors.js';

/**
 * The name of the cookie that carries the dashboard token after `/?token=` was opened once. Browsers
 * send a cookie to every port of a host, so the name holds the port: two hubs on one machine (each with
 * its own token) do not overwrite each other's login.
 */
export function tokenCookieName(port: number): string {
  return `musubi_token_${port}`;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The parts of a request the guard looks at. */
export interface GuardedRequest {
  readonly method: string;
  /** Path plus query, as sent. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** What to do with a request that passed: go on, or redirect after setting the token cookie. */
export type GuardVerdict =
  { readonly kind: 'pass' } | { readonly kind: 'login'; readonly setCookie: string; readonly location: '/' };

/** Options of {@link RequestGuard}. */
export interface RequestGuardOptions {
  /** The host the gateway binds; a loopback host turns on the Host header check. */
  readonly host: string;
  /** The bound port (known after listen). */
  readonly port: () => number;
  /** Required on every request but the public ones when set: Bearer header, cookie, or once as `/?token=`. */
  readonly token?: string;
  /**
   * Paths a GET or HEAD reaches without the token: the page's static files (they hold no data; the page
   * then asks for the token) and the health check. Everything else needs it.
   */
  readonly publicPaths?: ReadonlySet<string>;
}

function header(req: GuardedRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function cookieValue(cookieHeader: string | undefined, name: string): string | undefined {
  for (const part of (cookieHeader ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/**
 * Decides whether a request may run, before any route sees it.
 * - Loopback binds check `Host` (127.0.0.1, localhost or [::1] with the bound port), which defeats DNS
 *   rebinding: a foreign page cannot reach the API through a name that resolves to 127.0.0.1.
 * - With a token, every request but a GET/HEAD of a public path needs it (compared in constant time);
 *   `GET /?token=<t>` sets an HttpOnly SameSite=Strict cookie and redirects to `/`, so the token leaves
 *   the address bar.
 * - Mutating methods with an `Origin` must come from the gateway's own origin; `Sec-Fetch-Site:
 *   cross-site` is refused too. Clients without Origin (curl, scripts) pass: browsers always send it.
 * Throws GATEWAY_FORBIDDEN (403) or GATEWAY_UNAUTHORIZED (401).
 */
export class RequestGuard {
  readonly #options: RequestGuardOptions;
  readonly #tokenDigest: Buffer | undefined;

  constructor(options: RequestGuardOptions) {
    this.#options = options;
    this.#tokenDigest = options.token === undefined ? undefined : digest(options.token);
  }

  /** Checks one request; see the class comment. */
  check(req: GuardedRequest): GuardVerdict {
    const hostHeader = header(req, 'host') ?? '';
    if (isLoopbackHost(this.#options.host)) this.#checkHost(hostHeader);
    if (!SAFE_METHODS.has(req.method)) this.#checkOrigin(req, hostHeader);
    if (this.#tokenDigest === undefined) return { kind: 'pass' };
    // A request target URL cannot parse (say `//`) carries no token either.
    const url = URL.canParse(req.url, 'http://gateway.invalid')
      ? new URL(req.url, 'http://gateway.invalid')
      : null;
    if (req.method === 'GET' && url?.pathname === '/' && this.#isValidToken(url.searchParams.get('token'))) {
      // The cookie carries the configured token (schema-checked alphabet), never request text.
      const name = tokenCookieName(this.#options.port());
      const setCookie = `${name}=${this.#options.token ?? ''}; HttpOnly; SameSite=Strict; Path=/`;
      return { kind: 'login', setCookie, location: '/' };
    }
    if (this.#isValidToken(this.#presentedToken(req))) return { kind: 'pass' };
    const isRead = req.method === 'GET' || req.method === 'HEAD';
    if (isRead && url !== null && this.#options.publicPaths?.has(url.pathname) === true) {
      return { kind: 'pass' };
    }
    throw new MusubiError(
      'GATEWAY_UNAUTHORIZED',
      'this hub needs its token: open the URL `musubi up` printed, or the one `musubi dashboard` prints ' +
        '(it carries the token); scripts send `Authorization: Bearer <token>` from the token file',
    );
  }

  #checkHost(hostHeader: string): void {
    const port = this.#options.port();
    const allowed = ['127.0.0.1', 'localhost', '[::1]', this.#options.host].map((h) => `${h}:${port}`);
    if (!allowed.includes(hostHeader.toLowerCase())) {
      throw new MusubiError('GATEWAY_FORBIDDEN', 'Host header is not this loopback gateway', {
        details: { host: hostHeader.slice(0, 200) },
      });
    }
  }

  #checkOrigin(req: GuardedRequest, hostHeader: string): void {
    if (header(req, 'sec-fetch-site') === 'cross-site') {
      throw new MusubiError('GATEWAY_FORBIDDEN', 'cross-site requests may not change anything');
    }
    const origin = header(req, 'origin');
    if (origin !== undefined && origin !== `http://${hostHeader}`) {
      throw new MusubiError('GATEWAY_FORBIDDEN', 'Origin is not this gateway', {
        details: { origin: origin.slice(0, 200) },
      });
    }
  }

  #presentedToken(req: GuardedRequest): string | undefined {
    const auth = header(req, 'authorization');
    if (auth?.startsWith('Bearer ') === true) return auth.slice('Bearer '.length).trim();
    return cookieValue(header(req, 'cookie'), tokenCookieName(this.#options.port()));
  }

  #isValidToken(candidate: string | null | undefined): boolean {
    if (this.#tokenDigest === undefined || candidate === null || candidate === undefined) return false;
    return timingSafeEqual(digest(candidate), this.#tokenDigest);
  }
}
