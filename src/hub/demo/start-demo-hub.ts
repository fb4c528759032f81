import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentBackend, AgentRunner } from '../../agents/agent-runner.js';
import type { AgentDirectory } from '../../bus/agent-directory.js';
import type { Clock } from '../../core/clock.js';
import type { Config } from '../../core/config.schema.js';
import { MusubiError } from '../../core/errors.js';
import type { IdGenerator } from '../../core/ids.js';
import type { Logger } from '../../core/logger.js';
import type { Gateway } from '../../gateways/gateway.js';
import { createHubToken, hubTokenDir } from '../../gateways/http/hub-token.js';
import { MANAGER_NAME, workerName } from '../../gateways/yadon/yadon-paths.js';
import type { Hub } from '../hub.js';
import { startConfiguredHub, type ConfiguredHub } from '../start-configured-hub.js';
import type { AgentSyncTarget } from './agent-sync-call.js';
import { AGENT_SYNC_PEERS, DEMO_TEAM, DEMO_WORKERS, type DemoPaths } from './demo-config.js';
import { demoTaskSource, demoTeamSource } from './demo-dashboard.js';
import type { DemoProgress } from './demo-progress.js';
import { createDemoDecorator, demoTier, type InjectedFault } from './demo-runners.js';
import type { TurnObserver } from './turn-hooks.js';
import type { YadonPhaseTracker } from './yadon-phase-tracker.js';

/** The running demo hub and what the team needs from it. */
export interface DemoHub extends AsyncDisposable {
  readonly hub: Hub;
  readonly directory: AgentDirectory;
  readonly runnerFor: (agent: string) => AgentRunner;
  /** The yadon socket folder (a private temporary folder: socket paths must stay short). */
  readonly socketDir: string;
  readonly agentSync: AgentSyncTarget;
  readonly dashboardUrl: string;
  /** Stops the hub (gateways, bus, store), then removes the socket folder. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link startDemoHub}. */
export interface StartDemoHubOptions {
  readonly config: Config;
  readonly cwd: string;
  readonly paths: DemoPaths;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly backend: AgentBackend;
  readonly dashboardPort: number;
  readonly progress: DemoProgress;
  readonly goal: string;
  readonly tracker: YadonPhaseTracker;
  readonly fault: InjectedFault;
}

function tcpTarget(gateway: Gateway | undefined): AgentSyncTarget {
  const address = gateway?.address();
  if (address?.kind !== 'tcp') throw new MusubiError('INTERNAL', 'agent_sync gateway is not on TCP');
  return { host: address.host, port: address.port };
}

/**
 * Starts the demo's hub: SQLite store in the state folder, the bus, and the dashboard, yadon and
 * agent_sync gateways, every member's runner from the hub's factory on the chosen backend (with the
 * injected fault, and observers feeding the agent directory and the yadon phase tracker). Rejects with
 * the hub's start error after closing what was started.
 */
export async function startDemoHub(o: StartDemoHubOptions): Promise<DemoHub> {
  const socketDir = await mkdtemp(join(tmpdir(), 'musubi-demo-'));
  const observers: Record<string, TurnObserver> = { [MANAGER_NAME]: o.tracker.manager };
  for (let n = 1; n <= DEMO_WORKERS; n++) observers[workerName(n)] = o.tracker.worker(workerName(n));
  let hub: ConfiguredHub;
  try {
    hub = await startConfiguredHub({
      config: o.config,
      cwd: o.cwd,
      env: o.env,
      logger: o.logger,
      clock: o.clock,
      ids: o.ids,
      // Every member runs on the chosen backend: the installed CLIs choose nothing.
      installed: new Set(),
      runnerFlags: { backend: o.backend },
      decorateRunner: createDemoDecorator({ logger: o.logger, observers, fault: o.fault }),
      gateways: {
        agentSync: {
          host: '127.0.0.1',
          port: 0,
          agents: AGENT_SYNC_PEERS,
          cwd: o.paths.agentSyncDir,
          isFresh: true,
          isBridged: false,
        },
        yadon: { socketDir, workerCount: DEMO_WORKERS, workDir: o.paths.projectDir },
        http: {
          host: '127.0.0.1',
          port: o.dashboardPort,
          // The demo's page guards its API like `musubi up`'s: a fresh token, in this user's token folder.
          token: createHubToken(),
          tokenDir: hubTokenDir(o.env),
          urlFile: o.paths.urlFile,
          tasks: demoTaskSource(o.progress),
          teams: [
            demoTeamSource({ progress: o.progress, members: DEMO_TEAM.map((m) => m.name), goal: o.goal }),
          ],
        },
      },
    });
  } catch (err) {
    await rm(socketDir, { recursive: true, force: true });
    throw err;
  }
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= hub.close().finally(() => rm(socketDir, { recursive: true, force: true }));
    return closing;
  };
  try {
    const { http, agentSync } = hub.byKind;
    if (http === undefined) throw new MusubiError('INTERNAL', 'the demo hub started without its dashboard');
    return {
      hub,
      directory: hub.directory,
      runnerFor: (agent) => hub.runners.runnerFor(agent, { tier: demoTier(agent) }),
      socketDir,
      agentSync: tcpTarget(agentSync),
      dashboardUrl: http.loginUrl(),
      close,
      [Symbol.asyncDispose]: close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
