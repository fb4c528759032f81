import type { AgentBackend, AgentRunner } from '../agents/agent-runner.js';
import { lookupAlias } from '../agents/selection/backend-aliases.js';
import type { AgentDirectory } from '../bus/agent-directory.js';
import type { Bus } from '../bus/bus.types.js';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.schema.js';
import { MusubiError } from '../core/errors.js';
import type { IdGenerator } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import { createAgentSyncGateway } from '../gateways/agent-sync/agent-sync-gateway.js';
import { attachedElsewhere } from '../gateways/bridging/attachment.js';
import type { Gateway } from '../gateways/gateway.js';
import { createHttpGateway, type HttpGateway } from '../gateways/http/http-gateway.js';
import { createRegistryTaskSource } from '../gateways/http/registry-task-source.js';
import { createRoundsTeamSource } from '../gateways/http/rounds-team-source.js';
import { createIgniteGateway, type IgniteGateway } from '../gateways/ignite/ignite-gateway.js';
import { createNekoGateway, type NekoGateway } from '../gateways/neko/neko-gateway.js';
import { createYadonGateway } from '../gateways/yadon/yadon-gateway.js';
import type { TaskRegistry } from '../tasks/task-registry.js';
import {
  igniteIdentity,
  NEKO_IDENTITY,
  yadonManager,
  yadonWorker,
  type IdentifiedAgent,
} from './agent-identities.js';
import type {
  AgentSyncSetup,
  GatewaySetups,
  HttpSetup,
  IgniteSetup,
  NekoSetup,
  YadonSetup,
} from './gateway-setups.js';
import type { HubRunners } from './hub-runners.js';
import { createRunSource } from './run-source.js';
import { threePhaseTeams } from './team-builders.js';

/** Everything the gateways of one hub are built from. */
export interface GatewayDeps {
  readonly bus: Bus;
  readonly tasks: TaskRegistry;
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly runners: HubRunners;
  /** One view of every agent, shared so a gateway knows which agents another gateway has attached. */
  readonly directory: AgentDirectory;
  /** Where the hub was started: runs started from the dashboard work on the repository holding it. */
  readonly cwd: string;
  /** CLI backends whose binary is installed (runs started from the dashboard pick from them). */
  readonly installed: ReadonlySet<AgentBackend>;
}

/** The gateways of one hub by protocol, and all of them in start order. */
export interface BuiltGateways {
  readonly agentSync?: Gateway;
  readonly yadon?: Gateway;
  readonly ignite?: IgniteGateway;
  readonly neko?: NekoGateway;
  readonly http?: HttpGateway;
  readonly all: readonly Gateway[];
}

/**
 * The agent_sync gateway of a setup. Its bus may still be opening (`musubi agent-sync serve` binds
 * first); without a directory it records no attachments.
 */
export function agentSyncGateway(
  d: {
    readonly bus: Bus | Promise<Bus>;
    readonly logger: Logger;
    readonly clock: Clock;
    readonly directory?: AgentDirectory;
  },
  s: AgentSyncSetup,
): Gateway {
  return createAgentSyncGateway({
    bus: d.bus,
    logger: d.logger,
    clock: d.clock,
    agents: s.agents,
    cwd: s.cwd,
    host: s.host,
    port: s.port,
    ...(s.isNetworkAccessAllowed === true && { unauthenticatedNetworkAccess: true }),
    ...(s.isFresh !== undefined && { isFresh: s.isFresh }),
    ...(s.staleAfterMs !== undefined && { staleAfterMs: s.staleAfterMs }),
    ...(s.isBridged && d.directory !== undefined && { directory: d.directory }),
  });
}

function yadonGateway(d: GatewayDeps, s: YadonSetup): Gateway {
  const runnerOf = (a: IdentifiedAgent): AgentRunner => d.runners.runnerFor(a.name, a.identity);
  return createYadonGateway({
    bus: d.bus,
    registry: d.tasks,
    directory: d.directory,
    logger: d.logger,
    clock: d.clock,
    ids: d.ids,
    socketDir: s.socketDir,
    workerCount: s.workerCount,
    workDir: s.workDir,
    managerTeam: threePhaseTeams(runnerOf(yadonManager()), d.logger),
    workerRunner: (n) => runnerOf(yadonWorker(n)),
  });
}

function igniteGateway(d: GatewayDeps, s: IgniteSetup): IgniteGateway {
  return createIgniteGateway({
    bus: d.bus,
    logger: d.logger,
    clock: d.clock,
    workspace: s.workspace,
    runtimeDir: s.runtimeDir,
    settings: s.settings,
    busMaxAttempts: d.config.bus.retry.maxAttempts,
    runnerFor: (agent) => d.runners.runnerFor(agent, igniteIdentity(agent)),
    systemPromptFor: s.systemPromptFor,
    ...(s.onProgress !== undefined && { onProgress: s.onProgress }),
    ...(s.onFatal !== undefined && { onFatal: s.onFatal }),
    ...(s.isBridged && { isAttachedElsewhere: attachedElsewhere(d.directory, 'ignite') }),
    ...(s.workers !== undefined && { workers: s.workers }),
  });
}

/** A N.E.K.O. agent is an `agents.<name>` entry or a backend name; anything else is a config error. */
function nekoRunnerFor(d: GatewayDeps): (agent: string) => AgentRunner {
  return (agent) => {
    if (!Object.hasOwn(d.config.agents, agent) && lookupAlias(agent) === undefined) {
      throw new MusubiError(
        'AGENT_BACKEND_UNKNOWN',
        `neko: '${agent}' is neither a configured agent nor a backend`,
      );
    }
    return d.runners.runnerFor(agent, NEKO_IDENTITY);
  };
}

function nekoGateway(d: GatewayDeps, s: NekoSetup): NekoGateway {
  return createNekoGateway({
    bus: d.bus,
    registry: d.tasks,
    logger: d.logger,
    clock: d.clock,
    settings: s.settings,
    runnerFor: nekoRunnerFor(d),
    env: d.env,
    reaper: d.runners.reaper,
    directory: d.directory,
    ...(s.isFresh !== undefined && { isFresh: s.isFresh }),
    ...(s.reloadSettings !== undefined && { reloadSettings: s.reloadSettings }),
    ...(s.isBridged && { mail: d.bus }),
  });
}

function httpGateway(d: GatewayDeps, s: HttpSetup): HttpGateway {
  return createHttpGateway({
    bus: d.bus,
    logger: d.logger,
    clock: d.clock,
    host: s.host,
    port: s.port,
    ...(s.token !== undefined && { token: s.token }),
    ...(s.tokenDir !== undefined && { tokenDir: s.tokenDir }),
    ...(s.isNetworkAccessAllowed === true && { networkAccess: true }),
    urlFile: s.urlFile,
    tasks: s.tasks ?? createRegistryTaskSource(d.tasks),
    agents: d.directory,
    teams: s.teams ?? [createRoundsTeamSource(d.bus.kv)],
    ...(d.runners.turns !== undefined && { turns: d.runners.turns }),
    runs: createRunSource({
      bus: d.bus,
      cwd: d.cwd,
      config: d.config,
      env: d.env,
      installed: d.installed,
      logger: d.logger,
      clock: d.clock,
      ...(s.maxConcurrentRuns !== undefined && { maxConcurrentRuns: s.maxConcurrentRuns }),
    }),
  });
}

/**
 * Builds the gateways of `setups` in start order (the hub stops them in reverse): the protocol
 * gateways first, the dashboard last so it starts once there is something to show.
 */
export function buildGateways(d: GatewayDeps, setups: GatewaySetups): BuiltGateways {
  const agentSync = setups.agentSync && agentSyncGateway(d, setups.agentSync);
  const yadon = setups.yadon && yadonGateway(d, setups.yadon);
  const ignite = setups.ignite && igniteGateway(d, setups.ignite);
  const neko = setups.neko && nekoGateway(d, setups.neko);
  const http = setups.http && httpGateway(d, setups.http);
  return {
    ...(agentSync !== undefined && { agentSync }),
    ...(yadon !== undefined && { yadon }),
    ...(ignite !== undefined && { ignite }),
    ...(neko !== undefined && { neko }),
    ...(http !== undefined && { http }),
    all: [agentSync, yadon, ignite, neko, http].filter((g): g is Gateway => g !== undefined),
  };
}
