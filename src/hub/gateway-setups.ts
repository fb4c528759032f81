import type { Config } from '../core/config.schema.js';
import { defaultHttpConfig } from '../core/config.schema.js';
import type { MusubiError } from '../core/errors.js';
import {
  AGENT_SYNC_DEFAULT_HOST,
  AGENT_SYNC_DEFAULT_PORT,
} from '../gateways/agent-sync/agent-sync-gateway.js';
import { parseAgentsList } from '../gateways/agent-sync/agents-list.js';
import type { TaskSource, TeamSource } from '../gateways/http/http-ports.js';
import { createHubToken, hubTokenDir } from '../gateways/http/hub-token.js';
import { urlFilePath } from '../gateways/http/url-file.js';
import { resolveRuntimeDir, resolveWorkspace } from '../gateways/ignite/ignite-paths.js';
import type { IgniteSettings } from '../gateways/ignite/ignite-settings.js';
import type { ProgressLine } from '../gateways/ignite/monitor-context.js';
import { loadMonitorSettings } from '../gateways/ignite/monitor-settings.js';
import { resolveNekoSettings, type NekoSettings } from '../gateways/neko/neko-settings.js';
import { resolveSocketDir, resolveWorkerCount } from '../gateways/yadon/yadon-paths.js';
import { instructionsFor } from '../teams/org/org-instructions.js';
import { parseStoreUrl } from './open-store.js';

type Env = Readonly<Record<string, string | undefined>>;

/*
 * How each gateway runs. `musubi up` sets up every gateway the config enables from the config
 * ({@link setupsFromConfig}); a standalone command starts from the same setup and applies its flags.
 * `isBridged`: the gateway takes part in cross-protocol delivery through the agent directory
 * (docs/bridging.md); the standalone drop-ins of agent_sync, IGNITE and N.E.K.O. do not.
 */

/** agent_sync: where it listens and which agents it serves. */
export interface AgentSyncSetup {
  readonly host: string;
  readonly port: number;
  /** `gateways.agentSync.unauthenticatedNetworkAccess`: a host beyond loopback is refused without it. */
  readonly isNetworkAccessAllowed?: boolean;
  /** AGENTS_LIST. */
  readonly agents: readonly string[];
  /** Where the round logs go (`<cwd>/logs/v6/`). */
  readonly cwd: string;
  readonly isFresh?: boolean;
  readonly staleAfterMs?: number;
  /** Records each joined agent in the agent directory. */
  readonly isBridged: boolean;
}

/** yadon-agents: the socket directory, N workers and the default project directory. */
export interface YadonSetup {
  readonly socketDir: string;
  readonly workerCount: number;
  readonly workDir: string;
}

/** IGNITE: the workspace, its runtime dir and monitor settings, and what each turn is told. */
export interface IgniteSetup {
  readonly workspace: string;
  readonly runtimeDir: string;
  readonly settings: IgniteSettings;
  /** `ignitian_1..n` queue folders created at start. */
  readonly workers?: number;
  /** The role instructions of each turn. */
  readonly systemPromptFor: (agent: string) => string | undefined;
  readonly onProgress?: (line: ProgressLine) => void;
  readonly onFatal?: (error: MusubiError) => void;
  /** Hands messages of agents attached elsewhere to their mailbox instead of running them. */
  readonly isBridged: boolean;
}

/** N.E.K.O.: the resolved settings, and how they reload. */
export interface NekoSetup {
  readonly settings: NekoSettings;
  readonly isFresh?: boolean;
  readonly reloadSettings?: () => Promise<NekoSettings>;
  /** Runs the channels' bus mail as tasks (channels show in the agent directory either way). */
  readonly isBridged: boolean;
}

/** The dashboard: address, token, URL file, and what it shows (default: the hub's registry and rounds). */
export interface HttpSetup {
  readonly host: string;
  readonly port: number;
  /** Absent only when the user opted out (`auth: none`, `--no-token`). */
  readonly token?: string;
  /** Where the token file goes (the user's runtime or state folder). */
  readonly tokenDir?: string;
  /** `gateways.http.networkAccess`: a host beyond loopback is refused without it (and a token). */
  readonly isNetworkAccessAllowed?: boolean;
  readonly urlFile: string;
  /** Runs started from the page at once (`gateways.http.maxConcurrentRuns`). */
  readonly maxConcurrentRuns?: number;
  readonly tasks?: TaskSource;
  readonly teams?: readonly TeamSource[];
}

/** The gateways of one running configuration, each with its setup; absent ones do not run. */
export interface GatewaySetups {
  readonly agentSync?: AgentSyncSetup;
  readonly yadon?: YadonSetup;
  readonly ignite?: IgniteSetup;
  readonly neko?: NekoSetup;
  readonly http?: HttpSetup;
}

/** agent_sync as musubi.yaml `gateways.agentSync` and AGENTS_LIST set it up (enabled or not). */
export function agentSyncSetup(config: Config, env: Env, cwd: string): AgentSyncSetup {
  const agentSync = config.gateways.agentSync;
  return {
    host: agentSync?.host ?? AGENT_SYNC_DEFAULT_HOST,
    port: agentSync?.port ?? AGENT_SYNC_DEFAULT_PORT,
    isNetworkAccessAllowed: agentSync?.unauthenticatedNetworkAccess === true,
    agents: parseAgentsList(env['AGENTS_LIST']),
    cwd,
    isBridged: true,
  };
}

/** yadon: `gateways.yadon`, unset fields from YADON_SOCKET_DIR and YADON_COUNT, the work dir `cwd`. */
export function yadonSetup(config: Config, env: Env, cwd: string): YadonSetup {
  const yadon = config.gateways.yadon;
  return {
    socketDir: yadon?.socketDir ?? resolveSocketDir(env),
    workerCount: yadon?.workers ?? resolveWorkerCount(env),
    workDir: yadon?.workDir ?? cwd,
  };
}

/** The IGNITE tools as the org instructions name them: the musubi drop-ins on PATH. */
const IGNITE_TOOLS = { send: 'musubi ignite send', mime: 'musubi ignite mime' };

/**
 * IGNITE: the workspace (`gateways.ignite.workspace`, else IGNITE_WORKSPACE / WORKSPACE_DIR, else
 * `cwd`), its runtime dir, and the monitor settings as `musubi ignite monitor` loads them, with
 * musubi.yaml's `gateways.ignite` settings between system.yaml and the environment. Rejects with
 * CONFIG_INVALID for a bad system.yaml.
 */
export async function igniteSetup(config: Config, env: Env, cwd: string): Promise<IgniteSetup> {
  const ignite = config.gateways.ignite;
  const workspace = resolveWorkspace({
    ...(ignite?.workspace !== undefined && { flag: ignite.workspace }),
    env,
    cwd,
    isMonitor: true,
  });
  const runtimeDir = resolveRuntimeDir(workspace, env);
  const musubiConfig = {
    ...(ignite?.pollIntervalMs !== undefined && { pollIntervalMs: ignite.pollIntervalMs }),
    ...(ignite?.parallelMax !== undefined && { parallelMax: ignite.parallelMax }),
    ...(ignite?.maxTurnMs !== undefined && { maxTurnMs: ignite.maxTurnMs }),
    ...(ignite?.taskTimeoutMs !== undefined && { taskTimeoutMs: ignite.taskTimeoutMs }),
  };
  const settings = await loadMonitorSettings({ runtimeDir, env, musubiConfig });
  return {
    workspace,
    runtimeDir,
    settings,
    // Each turn gets its role's instructions (what it receives, what it sends to whom, which tools).
    systemPromptFor: (agent) => instructionsFor(agent, IGNITE_TOOLS),
    isBridged: true,
    ...(ignite?.workers !== undefined && { workers: ignite.workers }),
  };
}

/** N.E.K.O.: the `neko` section with its environment variables (enabled or not). */
export function nekoSetup(config: Config, env: Env, cwd: string): NekoSetup {
  return { settings: resolveNekoSettings(config.neko, env, cwd), isBridged: true };
}

/** The token a dashboard runs with: the configured one, none when opted out, else a fresh one. */
function tokenOf(http: NonNullable<Config['gateways']['http']>): { token?: string } {
  if (http.token !== undefined) return { token: http.token };
  return http.auth === 'none' ? {} : { token: createHubToken() };
}

/**
 * The dashboard: `gateways.http` (127.0.0.1:7420 by default), its URL file beside a SQLite store, its
 * token (a fresh one per start unless configured or turned off) with its file in the user's token folder.
 */
export function httpSetup(config: Config, cwd: string, env: Env): HttpSetup {
  const http = config.gateways.http ?? defaultHttpConfig();
  const store = parseStoreUrl(config.store, cwd);
  return {
    host: http.host,
    port: http.port,
    ...tokenOf(http),
    tokenDir: hubTokenDir(env),
    isNetworkAccessAllowed: http.networkAccess,
    urlFile: urlFilePath({ cwd, ...(store.kind === 'sqlite' && { sqliteFile: store.path }) }),
    maxConcurrentRuns: http.maxConcurrentRuns,
  };
}

/**
 * The gateways `musubi up` runs: agent_sync, yadon, IGNITE and N.E.K.O. when the config enables them,
 * the dashboard unless it is turned off explicitly. Rejects like {@link igniteSetup}.
 */
export async function setupsFromConfig(config: Config, env: Env, cwd: string): Promise<GatewaySetups> {
  const { agentSync, yadon, ignite, http } = config.gateways;
  return {
    ...(agentSync?.enabled === true && { agentSync: agentSyncSetup(config, env, cwd) }),
    ...(yadon?.enabled === true && { yadon: yadonSetup(config, env, cwd) }),
    ...(ignite?.enabled === true && { ignite: await igniteSetup(config, env, cwd) }),
    ...(config.neko?.enabled === true && { neko: nekoSetup(config, env, cwd) }),
    ...(http?.enabled !== false && { http: httpSetup(config, cwd, env) }),
  };
}
