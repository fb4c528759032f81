import { createAgentSyncGateway } from '../gateways/agent-sync/agent-sync-gateway.js';
import { parseAgentsList } from '../gateways/agent-sync/agents-list.js';
import type { Gateway } from '../gateways/gateway.js';
import { createHttpGateway } from '../gateways/http/http-gateway.js';
import { urlFilePath } from '../gateways/http/url-file.js';
import { createIgniteGateway } from '../gateways/ignite/ignite-gateway.js';
import { resolveRuntimeDir, resolveWorkspace } from '../gateways/ignite/ignite-paths.js';
import type { IgniteSettings } from '../gateways/ignite/ignite-settings.js';
import { loadMonitorSettings } from '../gateways/ignite/monitor-settings.js';
import { createYadonGateway } from '../gateways/yadon/yadon-gateway.js';
import {
  MANAGER_NAME,
  resolveSocketDir,
  resolveWorkerCount,
  workerName,
} from '../gateways/yadon/yadon-paths.js';
import { DEFAULT_HTTP_PORT } from '../core/config.schema.js';
import type { Bus } from '../bus/bus.types.js';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.schema.js';
import type { IdGenerator } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import { parseStoreUrl } from './open-store.js';
import type { HubRunners } from './hub-runners.js';
import type { AgentDirectory } from '../bus/agent-directory.js';
import { attachedElsewhere } from '../gateways/bridging/attachment.js';
import { createNekoGateway } from '../gateways/neko/neko-gateway.js';
import { resolveNekoSettings } from '../gateways/neko/neko-settings.js';
import { instructionsFor } from '../teams/org/org-instructions.js';
import type { TaskRegistry } from '../tasks/task-registry.js';
import { createRegistryTaskSource } from '../gateways/http/registry-task-source.js';
import { createRoundsTeamSource } from '../gateways/http/rounds-team-source.js';

/** Everything the gateways of one hub are built from. */
export interface GatewayDeps {
  readonly bus: Bus;
  readonly tasks: TaskRegistry;
  readonly config: Config;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly runners: HubRunners;
  /** One view of every agent, shared so a gateway knows which agents another gateway has attached. */
  readonly directory: AgentDirectory;
  /** Where and how the IGNITE gateway runs ({@link prepareIgnite}); absent when it is not enabled. */
  readonly ignite?: IgniteSetup;
}

/** The IGNITE gateway's workspace, runtime dir and monitor settings, resolved before the hub starts. */
export interface IgniteSetup {
  readonly workspace: string;
  readonly runtimeDir: string;
  readonly settings: IgniteSettings;
}

/**
 * Resolves the IGNITE gateway's setup when the config enables it (else undefined): the workspace
 * (`gateways.ignite.workspace`, else IGNITE_WORKSPACE / WORKSPACE_DIR, else `cwd`), its runtime dir, and
 * the monitor settings as `musubi ignite monitor` loads them, with musubi.yaml's `gateways.ignite`
 * settings between system.yaml and the environment. Rejects with CONFIG_INVALID for a bad system.yaml.
 */
export async function prepareIgnite(
  config: Config,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): Promise<IgniteSetup | undefined> {
  const ignite = config.gateways.ignite;
  if (ignite?.enabled !== true) return undefined;
  const workspace = resolveWorkspace({
    ...(ignite.workspace !== undefined && { flag: ignite.workspace }),
    env,
    cwd,
    isMonitor: true,
  });
  const runtimeDir = resolveRuntimeDir(workspace, env);
  const { pollIntervalMs, parallelMax, maxTurnMs, taskTimeoutMs } = ignite;
  const settings = await loadMonitorSettings({
    runtimeDir,
    env,
    musubiConfig: { pollIntervalMs, parallelMax, maxTurnMs, taskTimeoutMs },
  });
  return { workspace, runtimeDir, settings };
}

function httpGateway(d: GatewayDeps): Gateway | undefined {
  // `musubi up` serves the dashboard unless the config turns it off explicitly.
  const http = d.config.gateways.http ?? { enabled: true, host: '127.0.0.1', port: DEFAULT_HTTP_PORT };
  if (!http.enabled) return undefined;
  const store = parseStoreUrl(d.config.store, d.cwd);
  return createHttpGateway({
    bus: d.bus,
    logger: d.logger,
    clock: d.clock,
    host: http.host,
    port: http.port,
    ...(http.token !== undefined && { token: http.token }),
    urlFile: urlFilePath({ cwd: d.cwd, ...(store.kind === 'sqlite' && { sqliteFile: store.path }) }),
    tasks: createRegistryTaskSource(d.tasks),
    agents: d.directory,
    teams: [createRoundsTeamSource(d.bus.kv)],
  });
}

function yadonGateway(d: GatewayDeps): Gateway | undefined {
  const yadon = d.config.gateways.yadon;
  if (yadon?.enabled !== true) return undefined;
  const workerCount = yadon.workers ?? resolveWorkerCount(d.env);
  return createYadonGateway({
    bus: d.bus,
    logger: d.logger,
    clock: d.clock,
    ids: d.ids,
    socketDir: yadon.socketDir ?? resolveSocketDir(d.env),
    workerCount,
    workDir: yadon.workDir ?? d.cwd,
    managerRunner: d.runners.runnerFor(MANAGER_NAME, { tier: 'manager' }),
    workerRunner: (n) => d.runners.runnerFor(workerName(n), { tier: 'worker', workerNumber: n }),
  });
}

function igniteGateway(d: GatewayDeps): Gateway | undefined {
  if (d.ignite === undefined) return undefined;
  return createIgniteGateway({
    bus: d.bus,
    logger: d.logger,
    clock: d.clock,
    workspace: d.ignite.workspace,
    runtimeDir: d.ignite.runtimeDir,
    settings: d.ignite.settings,
    busMaxAttempts: d.config.bus.retry.maxAttempts,
    // IGNITE agents are named after their role (`ignitian_3` has the role `ignitian`).
    runnerFor: (agent) => d.runners.runnerFor(agent, { role: agent.replace(/[_-]\d+$/, '') }),
    isAttachedElsewhere: attachedElsewhere(d.directory, 'ignite'),
    // Each turn gets its role's instructions (what it receives, what it sends to whom, which tools).
    systemPromptFor: (agent) => instructionsFor(agent, IGNITE_TOOLS),
    ...(d.config.gateways.ignite?.workers !== undefined && { workers: d.config.gateways.ignite.workers }),
  });
}

/** The IGNITE tools as the org instructions name them: the musubi drop-ins on PATH. */
const IGNITE_TOOLS = { send: 'musubi ignite send', mime: 'musubi ignite mime' };

function agentSyncGateway(d: GatewayDeps): Gateway | undefined {
  const agentSync = d.config.gateways.agentSync;
  if (agentSync?.enabled !== true) return undefined;
  return createAgentSyncGateway({
    bus: d.bus,
    logger: d.logger,
    clock: d.clock,
    agents: parseAgentsList(d.env['AGENTS_LIST']),
    cwd: d.cwd,
    host: agentSync.host,
    port: agentSync.port,
    directory: d.directory,
  });
}

function nekoGateway(d: GatewayDeps): Gateway | undefined {
  if (d.config.neko?.enabled !== true) return undefined;
  return createNekoGateway({
    bus: d.bus,
    registry: d.tasks,
    logger: d.logger,
    clock: d.clock,
    settings: resolveNekoSettings(d.config.neko, d.env, d.cwd),
    runnerFor: (agent) => d.runners.runnerFor(agent),
    env: d.env,
    reaper: d.runners.reaper,
    directory: d.directory,
    mail: d.bus,
  });
}

/**
 * Builds every gateway the config enables, in start order (the hub stops them in reverse): the
 * protocol gateways first, the dashboard last so it starts once there is something to show.
 */
export function buildGateways(deps: GatewayDeps): Gateway[] {
  return [agentSyncGateway, yadonGateway, igniteGateway, nekoGateway, httpGateway].flatMap(
    (build) => build(deps) ?? [],
  );
}
