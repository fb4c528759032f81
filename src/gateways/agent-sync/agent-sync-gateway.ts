import { createServer, type Server, type Socket } from 'node:net';
import type { AgentDirectory } from '../../bus/agent-directory.js';
import type { Bus } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import { AGENT_SYNC_NETWORK_RISK, isLoopbackHost } from '../../core/config.schema.js';
import { MusubiError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import type { Gateway, GatewayAddress } from '../gateway.js';
import { AgentSyncProtocol } from './agent-sync-protocol.js';
import { AgentSyncConnection, LoopTurns } from './agent-sync-connection.js';

/** Defaults of the agent_sync v6 server. */
export const AGENT_SYNC_DEFAULT_HOST = '127.0.0.1';
export const AGENT_SYNC_DEFAULT_PORT = 9800;
export const AGENT_SYNC_DEFAULT_STALE_AFTER_MS = 120_000;
/** How long stop() lets connections finish their current line before closing them hard. */
const STOP_GRACE_MS = 5_000;

/** Collaborators and settings of {@link createAgentSyncGateway}. */
export interface AgentSyncGatewayOptions {
  /** The bus, or a promise of it: `start()` binds first and requests arriving meanwhile wait for it. */
  readonly bus: Bus | Promise<Bus>;
  readonly logger: Logger;
  readonly clock: Clock;
  /** AGENTS_LIST (see `parseAgentsList`): order and duplicates kept. */
  readonly agents: readonly string[];
  /** The server's working directory: round logs go to `<cwd>/logs/v6/`. */
  readonly cwd: string;
  /**
   * Default 127.0.0.1. A host beyond loopback needs `unauthenticatedNetworkAccess` (CONFIG_INVALID
   * otherwise: the protocol has no authentication) and is logged as a warning at start.
   */
  readonly host?: string;
  readonly unauthenticatedNetworkAccess?: boolean;
  /** Default 9800; 0 picks a free port. */
  readonly port?: number;
  /** Discard persisted state and the agents' mailboxes at start (`--fresh`). */
  readonly isFresh?: boolean;
  /** `status` reports an agent stale after this long unseen (default 120 s). */
  readonly staleAfterMs?: number;
  /** KV namespace, default `agent-sync`; two gateways on one bus need different ids. */
  readonly teamId?: string;
  /** Records each joined agent as attached through agent_sync (docs/bridging.md); default: not recorded. */
  readonly directory?: Pick<AgentDirectory, 'update'>;
}

/**
 * The agent_sync v6 TCP gateway: newline-delimited JSON on 127.0.0.1:9800, the 16 commands of
 * spec/agent-sync.md, state and mailboxes in the bus. `start()` binds, then loads the persisted state
 * (requests arriving meanwhile wait) and rejects with GATEWAY_ADDRESS_IN_USE when the port is taken,
 * GATEWAY_UNAVAILABLE when it cannot listen for another reason.
 * `stop()` stops accepting, cancels parked listens (their mail stays queued), lets each connection
 * finish its current line, then closes it. The bus is the caller's to close.
 */
export function createAgentSyncGateway(options: AgentSyncGatewayOptions): Gateway {
  const log = options.logger.child({ component: 'gateway.agent-sync' });
  const host = options.host ?? AGENT_SYNC_DEFAULT_HOST;
  if (!isLoopbackHost(host) && options.unauthenticatedNetworkAccess !== true) {
    throw new MusubiError(
      'CONFIG_INVALID',
      `agent-sync will not listen on ${host} (beyond loopback): ${AGENT_SYNC_NETWORK_RISK}. ` +
        'Allow it with gateways.agentSync.unauthenticatedNetworkAccess: true (musubi.yaml) or ' +
        '--unauthenticated-network-access (musubi agent-sync serve)',
      { details: { host } },
    );
  }
  const connections = new Set<AgentSyncConnection>();
  let server: Server | undefined;
  let core: Promise<AgentSyncProtocol> | undefined;
  let bound: GatewayAddress | undefined;
  let stopping: Promise<void> | undefined;
  let nextConnId = 0;
  const turns = new LoopTurns();

  const onConnection = (socket: Socket, ready: Promise<AgentSyncProtocol>): void => {
    if (stopping !== undefined) {
      socket.destroy();
      return;
    }
    const connection = new AgentSyncConnection({
      socket,
      core: ready,
      logger: log.child({ connId: ++nextConnId }),
      turns,
    });
    connections.add(connection);
    void connection.closed.then(() => connections.delete(connection));
  };

  const listen = (s: Server, port: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const onError = (err: Error): void => {
        const isTaken = 'code' in err && err.code === 'EADDRINUSE';
        reject(
          new MusubiError(
            isTaken ? 'GATEWAY_ADDRESS_IN_USE' : 'GATEWAY_UNAVAILABLE',
            `agent-sync cannot listen on ${host}:${port}: ${err.message}`,
            { cause: err },
          ),
        );
      };
      s.once('error', onError);
      s.listen({ host, port }, () => {
        s.off('error', onError);
        resolve();
      });
    });

  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      const closedServer = new Promise<void>((resolve) =>
        server === undefined ? resolve() : server.close(() => resolve()),
      );
      for (const connection of connections) connection.stop();
      const all = Promise.all([...connections].map((c) => c.closed));
      let graceTimer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => (graceTimer = setTimeout(resolve, STOP_GRACE_MS)));
      await Promise.race([all, grace]);
      clearTimeout(graceTimer);
      for (const connection of connections) connection.destroy();
      await closedServer;
      (await core?.catch(() => undefined))?.close();
      log.info('agent-sync gateway stopped');
    })();
    return stopping;
  };

  const gateway: Gateway = {
    name: 'agent-sync',
    async start(): Promise<void> {
      if (server !== undefined)
        throw new MusubiError('GATEWAY_UNAVAILABLE', 'agent-sync gateway already started');
      // Bind first; requests that arrive while the state loads wait for it.
      let adopt: (loading: Promise<AgentSyncProtocol>) => void = () => undefined;
      const ready = new Promise<AgentSyncProtocol>((resolve) => (adopt = resolve));
      core = ready;
      server = createServer({ allowHalfOpen: true, noDelay: true }, (socket) => onConnection(socket, ready));
      // Marked handled here: connections and start() each observe a load failure themselves.
      ready.catch(() => undefined);
      try {
        await listen(server, options.port ?? AGENT_SYNC_DEFAULT_PORT);
      } catch (err) {
        adopt(Promise.reject(err instanceof Error ? err : new Error(String(err))));
        throw err;
      }
      // Only after the bind: a failed listen rejects start() (one clean line from the CLI), not a log entry.
      server.on('error', (err) => log.error({ err }, 'agent-sync server error'));
      const address = server.address();
      if (address === null || typeof address === 'string')
        throw new MusubiError('GATEWAY_UNAVAILABLE', 'agent-sync gateway has no TCP address');
      bound = { kind: 'tcp', host: address.address, port: address.port };
      if (!isLoopbackHost(host))
        log.warn({ host }, `agent-sync listens beyond loopback: ${AGENT_SYNC_NETWORK_RISK}`);
      adopt(
        Promise.resolve(options.bus).then((bus) =>
          AgentSyncProtocol.open({
            bus,
            logger: log,
            clock: options.clock,
            agents: options.agents,
            cwd: options.cwd,
            teamId: options.teamId ?? 'agent-sync',
            staleAfterMs: options.staleAfterMs ?? AGENT_SYNC_DEFAULT_STALE_AFTER_MS,
            isFresh: options.isFresh ?? false,
            ...(options.directory !== undefined && { directory: options.directory }),
          }),
        ),
      );
      try {
        await ready;
      } catch (err) {
        await stop();
        throw err;
      }
      log.info(
        { host: bound.host, port: bound.port, agents: options.agents },
        'agent-sync gateway listening',
      );
    },
    address(): GatewayAddress {
      if (bound === undefined) throw new MusubiError('GATEWAY_UNAVAILABLE', 'agent-sync gateway not started');
      return bound;
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
  return gateway;
}
