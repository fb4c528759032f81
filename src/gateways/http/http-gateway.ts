import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { AgentDirectory } from '../../bus/agent-directory.js';
import type { Bus } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import { DEFAULT_HTTP_PORT, isLoopbackHost } from '../../core/config.schema.js';
import { MusubiError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { assertMailboxName } from '../../core/names.js';
import type { Gateway, GatewayAddress } from '../gateway.js';
import { registerAgentsRoute } from './agents-route.js';
import { ConnectionTracker } from './connection-tracker.js';
import { DASHBOARD_FILES, defaultDashboardDir, loadDashboardAssets } from './dashboard-assets.js';
import { hubTokenPath, removeHubTokenFile, writeHubTokenFile } from './hub-token.js';
import { lastEventCursor } from './event-tail.js';
import { registerEventsRoute, type EventStreamLimits } from './events-route.js';
import { toHttpErrorReply } from './http-error-reply.js';
import type { AgentSource, RunSource, TaskSource, TeamSource, TurnSource } from './http-ports.js';
import { registerMailboxRoutes } from './mailbox-routes.js';
import { registerMessageRoutes } from './message-routes.js';
import { RequestGuard } from './request-guard.js';
import { clientErrorHandler } from './client-error.js';
import type { RouteContext } from './route-context.js';
import type { SseStream } from './sse-stream.js';
import { registerStaticRoutes } from './static-routes.js';
import { registerTaskRoutes } from './task-routes.js';
import { registerRunRoutes } from './run-routes.js';
import { registerTeamRoutes } from './team-routes.js';
import { registerTurnRoutes } from './turn-routes.js';
import { removeUrlFile, writeUrlFile } from './url-file.js';

/** Largest JSON request body accepted (HTTP 413 GATEWAY_FRAME_TOO_LARGE beyond). */
export const DEFAULT_HTTP_BODY_LIMIT_BYTES = 256 * 1024;
const DEFAULT_STREAM_LIMITS: EventStreamLimits = {
  heartbeatMs: 15_000,
  slowClientMs: 30_000,
  maxStreams: 64,
  retryMs: 1_000,
};
/** How long a stop lets requests in flight finish before dropping their sockets. */
const STOP_GRACE_MS = 5_000;
const TOKEN_PATTERN = /^[A-Za-z0-9._~+/=-]{16,512}$/;
/**
 * Longest path parameter the router takes. Ids are checked by the routes' own schemas (up to 256
 * characters, each up to 12 bytes percent-encoded), so fastify's own limit (100) must never answer first.
 */
const MAX_PARAM_LENGTH = 4096;
/** What a GET reaches without the token: the page's files (no data in them) and the health check. */
const PUBLIC_PATHS: ReadonlySet<string> = new Set([...Object.keys(DASHBOARD_FILES), '/api/health']);

/** Collaborators and settings of {@link createHttpGateway}. */
export interface HttpGatewayOptions {
  readonly bus: Bus;
  readonly logger: Logger;
  readonly clock: Clock;
  /**
   * Default 127.0.0.1. Anything beyond loopback needs `token` and `networkAccess` (CONFIG_INVALID
   * otherwise), and is logged as a warning at start.
   */
  readonly host?: string;
  /** Default 7420; 0 picks a free port. */
  readonly port?: number;
  /**
   * Required on every route but the page's files and `/api/health` when set. The hub always sets one
   * (a fresh one per start unless the config names it) unless the user opted out.
   */
  readonly token?: string;
  /**
   * A folder only this user can read (see `hubTokenDir`): after listen the gateway leaves its URL and
   * token there as `hub-<port>.json` (0600) for the CLI commands that talk to it; removed on stop.
   */
  readonly tokenDir?: string;
  /** Allows a host beyond loopback (with `token`): the dashboard and its API are then on the network. */
  readonly networkAccess?: boolean;
  /** Default: an AgentDirectory over `bus`. */
  readonly agents?: AgentSource;
  /** The task registry, adapted; without it the task HUD shows "no task registry". */
  readonly tasks?: TaskSource;
  /** One source per coordination pattern that has teams; `team.*` events add the rest. */
  readonly teams?: readonly TeamSource[];
  /** Built dashboard folder; default {@link defaultDashboardDir}. */
  readonly assetsDir?: string;
  /** Where to leave the URL for `musubi dashboard` (written after listen, removed on stop). */
  readonly urlFile?: string;
  /** The turn log (transcripts, the timeline); without it the turn routes answer empty. */
  readonly turns?: TurnSource;
  /** The runs of `musubi run` this hub can list, start and stop. */
  readonly runs?: RunSource;
  /** Sender of messages typed into the dashboard; default `human`. */
  readonly sayFrom?: string;
  readonly bodyLimitBytes?: number;
  readonly streamLimits?: Partial<EventStreamLimits>;
}

/** The HTTP gateway: a Gateway plus the dashboard URL. */
export interface HttpGateway extends Gateway {
  /**
   * `http://host:port/` after start, without the token; a wildcard bind (0.0.0.0, ::) is shown as its
   * loopback address. Throws GATEWAY_UNAVAILABLE before start.
   */
  url(): string;
  /** {@link url} with `?token=` when the gateway needs one: the address to open once in a browser. */
  loginUrl(): string;
}

function checkOptions(o: HttpGatewayOptions): { host: string; port: number } {
  const host = o.host ?? '127.0.0.1';
  const port = o.port ?? DEFAULT_HTTP_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new MusubiError('CONFIG_INVALID', `HTTP port must be 0-65535, got ${port}`);
  }
  if (o.token !== undefined && !TOKEN_PATTERN.test(o.token)) {
    throw new MusubiError(
      'CONFIG_INVALID',
      'HTTP token must be 16-512 characters of A-Z a-z 0-9 . _ ~ + / = -',
    );
  }
  if (!isLoopbackHost(host) && o.token === undefined) {
    throw new MusubiError(
      'CONFIG_INVALID',
      `binding the HTTP gateway to ${host} (beyond loopback) requires a token`,
    );
  }
  if (!isLoopbackHost(host) && o.networkAccess !== true) {
    throw new MusubiError(
      'CONFIG_INVALID',
      `binding the HTTP gateway to ${host} puts the dashboard and its API on the network: ` +
        'it needs networkAccess (gateways.http.networkAccess: true) as well as a token',
    );
  }
  if (o.sayFrom !== undefined) assertMailboxName(o.sayFrom);
  return { host, port };
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function listenError(err: unknown, host: string, port: number): MusubiError {
  const code = err instanceof Error && 'code' in err ? err.code : undefined;
  return code === 'EADDRINUSE'
    ? new MusubiError('GATEWAY_ADDRESS_IN_USE', `${host}:${port} is in use`, { cause: err })
    : new MusubiError('GATEWAY_UNAVAILABLE', `cannot listen on ${host}:${port}`, { cause: err });
}

/**
 * Creates the HTTP gateway: REST + server-sent events + the dashboard (fastify). Throws CONFIG_INVALID
 * at once for a non-loopback host without a token or a malformed token. `start()` resolves once
 * listening (GATEWAY_ADDRESS_IN_USE / GATEWAY_UNAVAILABLE otherwise); `stop()` ends every event stream,
 * closes the server and removes the URL file; both are idempotent. The bus is the caller's to close.
 */
export function createHttpGateway(options: HttpGatewayOptions): HttpGateway {
  const { host, port } = checkOptions(options);
  const log = options.logger.child({ component: 'gateway.http' });
  const streams = new Set<SseStream>();
  let app: FastifyInstance | undefined;
  let tracker: ConnectionTracker | undefined;
  let bound: AddressInfo | undefined;
  let starting: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;

  const url = (): string => {
    if (bound === undefined)
      throw new MusubiError('GATEWAY_UNAVAILABLE', 'the HTTP gateway is not listening');
    // A wildcard bind is reachable through loopback on this machine; print that, it opens in a browser.
    const address =
      bound.address === '0.0.0.0' ? '127.0.0.1' : bound.address === '::' ? '::1' : bound.address;
    const name = address.includes(':') ? `[${address}]` : address;
    return `http://${name}:${bound.port}/`;
  };

  const build = async (): Promise<FastifyInstance> => {
    const server = Fastify({
      logger: false,
      bodyLimit: options.bodyLimitBytes ?? DEFAULT_HTTP_BODY_LIMIT_BYTES,
      routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
      clientErrorHandler: clientErrorHandler((message) => ({ code: 'GATEWAY_FRAME_INVALID', message })),
      // The router's own refusals (a malformed URL, an over-long parameter) answer in our shape too.
      frameworkErrors: (err, _request, reply: FastifyReply) => {
        const { status, body } = toHttpErrorReply(err);
        void reply.code(status).send(body);
      },
    });
    const guard = new RequestGuard({
      host,
      port: () => bound?.port ?? port,
      publicPaths: PUBLIC_PATHS,
      ...(options.token === undefined ? {} : { token: options.token }),
    });
    server.addHook('onRequest', async (request, reply) => {
      const verdict = guard.check(request);
      if (request.url.startsWith('/api/')) reply.header('cache-control', 'no-store');
      if (verdict.kind === 'login')
        return reply.header('set-cookie', verdict.setCookie).redirect(verdict.location, 303);
      return undefined;
    });
    server.setErrorHandler(async (err, request, reply) => {
      const { status, body, isUnexpected } = toHttpErrorReply(err);
      if (isUnexpected) log.error({ err, method: request.method, url: request.url }, 'HTTP request failed');
      return reply.code(status).send(body);
    });
    server.setNotFoundHandler(async (request, reply) =>
      reply
        .code(404)
        .send({ code: 'NOT_FOUND', message: `no route ${request.method} ${request.url.split('?')[0]}` }),
    );
    const ctx: RouteContext = {
      app: server,
      bus: options.bus,
      clock: options.clock,
      logger: log,
      agents: options.agents ?? new AgentDirectory({ bus: options.bus, clock: options.clock }),
      tasks: options.tasks,
      teams: options.teams ?? [],
      turns: options.turns,
      runs: options.runs,
      sayFrom: options.sayFrom ?? 'human',
    };
    server.get('/api/health', async () => ({
      status: 'ok',
      service: 'musubi',
      cursor: await lastEventCursor(options.bus),
      now: options.clock.now(),
    }));
    registerAgentsRoute(ctx);
    registerMailboxRoutes(ctx);
    registerMessageRoutes(ctx);
    registerTaskRoutes(ctx);
    registerTeamRoutes(ctx);
    registerTurnRoutes(ctx);
    registerRunRoutes(ctx);
    registerEventsRoute(ctx, streams, { ...DEFAULT_STREAM_LIMITS, ...options.streamLimits });
    registerStaticRoutes(ctx, await loadDashboardAssets(options.assetsDir ?? defaultDashboardDir()));
    return server;
  };

  const loginUrl = (): string =>
    options.token === undefined ? url() : `${url()}?token=${encodeURIComponent(options.token)}`;

  const tokenFile = (): string | undefined =>
    options.tokenDir === undefined || options.token === undefined || bound === undefined
      ? undefined
      : hubTokenPath(options.tokenDir, bound.port);

  /** What the gateway leaves for the CLI once it listens: the URL file, the token file. */
  const announce = async (): Promise<void> => {
    if (options.urlFile !== undefined) {
      await writeUrlFile(options.urlFile, {
        url: url(),
        needsToken: options.token !== undefined,
        pid: process.pid,
        startedAt: options.clock.now(),
      });
    }
    const file = tokenFile();
    if (file !== undefined && options.tokenDir !== undefined && options.token !== undefined) {
      await writeHubTokenFile(file, options.tokenDir, { url: url(), token: options.token, pid: process.pid });
    }
  };

  const start = async (): Promise<void> => {
    const server = await build();
    tracker = new ConnectionTracker(server.server);
    try {
      await server.listen({ host, port });
    } catch (err) {
      await server.close().catch(() => undefined); // the listen error is the one to report
      throw listenError(err, host, port);
    }
    app = server;
    bound = server.server.address() as AddressInfo;
    try {
      await announce();
    } catch (err) {
      // A gateway that cannot tell the CLI where it is must not stay half up: close the port again.
      await stop().catch(() => undefined); // the announce error is the one to report
      throw new MusubiError('GATEWAY_UNAVAILABLE', `the dashboard could not start: ${errorText(err)}`, {
        cause: err,
      });
    }
    log.info({ url: url() }, 'dashboard listening');
    if (!isLoopbackHost(host)) {
      log.warn(
        { host },
        'the dashboard and its API listen beyond loopback (networkAccess): the token guards them',
      );
    }
  };

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      // A stop from inside a failing start must not wait for that start.
      if (app === undefined) await starting?.catch(() => undefined);
      for (const stream of streams) stream.close();
      const failures: unknown[] = [];
      tracker?.drain();
      const grace = options.clock.setTimer(() => tracker?.destroyAll(), STOP_GRACE_MS);
      await app?.close().catch((err: unknown) => failures.push(err));
      grace.cancel();
      tracker?.detach();
      if (options.urlFile !== undefined && bound !== undefined) {
        await removeUrlFile(options.urlFile, url()).catch((err: unknown) => failures.push(err));
      }
      const file = tokenFile();
      if (file !== undefined)
        await removeHubTokenFile(file, url()).catch((err: unknown) => failures.push(err));
      if (failures.length > 0) throw new AggregateError(failures, 'HTTP gateway stop had failures');
    })();
    return stopping;
  };

  const gateway: HttpGateway = {
    name: 'http',
    start: () => {
      if (stopping !== undefined)
        return Promise.reject(new MusubiError('GATEWAY_UNAVAILABLE', 'gateway stopped'));
      starting ??= start();
      return starting;
    },
    address: (): GatewayAddress => {
      if (bound === undefined)
        throw new MusubiError('GATEWAY_UNAVAILABLE', 'the HTTP gateway is not listening');
      return { kind: 'tcp', host: bound.address, port: bound.port };
    },
    url,
    loginUrl,
    stop,
    [Symbol.asyncDispose]: stop,
  };
  return gateway;
}
