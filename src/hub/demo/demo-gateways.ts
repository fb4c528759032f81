import type { AgentRunner } from '../../agents/agent-runner.js';
import type { Bus } from '../../bus/bus.types.js';
import type { Clock } from '../../core/clock.js';
import type { IdGenerator } from '../../core/ids.js';
import type { Logger } from '../../core/logger.js';
import { createAgentSyncGateway } from '../../gateways/agent-sync/agent-sync-gateway.js';
import type { Gateway } from '../../gateways/gateway.js';
import { createHttpGateway, type HttpGateway } from '../../gateways/http/http-gateway.js';
import type { TaskSource, TeamSource } from '../../gateways/http/http-ports.js';
import { createYadonGateway } from '../../gateways/yadon/yadon-gateway.js';
import { MANAGER_NAME, workerName } from '../../gateways/yadon/yadon-paths.js';
import { AGENT_SYNC_PEERS, DEMO_WORKERS, type DemoPaths } from './demo-config.js';

/** The demo hub's gateways, in start order (the hub stops them in reverse). */
export interface DemoGateways {
  readonly http: HttpGateway;
  readonly yadon: Gateway;
  readonly agentSync: Gateway;
  readonly all: readonly Gateway[];
}

/**
 * Builds the gateways the demo team speaks through: the dashboard (HTTP + SSE on 127.0.0.1,
 * `dashboardPort`, 0 = any free port), yadon-agents (Unix sockets in `socketDir`, manager and
 * {@link DEMO_WORKERS} workers working in the scratch project) and agent_sync (TCP on a free port,
 * `AGENTS_LIST` = lead, tester, fresh state). Nothing listens until the hub starts them.
 */
export function buildDemoGateways(o: {
  readonly bus: Bus;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly paths: DemoPaths;
  readonly socketDir: string;
  readonly dashboardPort: number;
  readonly runnerFor: (agent: string) => AgentRunner;
  readonly tasks: TaskSource;
  readonly teams: readonly TeamSource[];
}): DemoGateways {
  const common = { bus: o.bus, logger: o.logger, clock: o.clock };
  const http = createHttpGateway({
    ...common,
    port: o.dashboardPort,
    urlFile: o.paths.urlFile,
    tasks: o.tasks,
    teams: o.teams,
  });
  const yadon = createYadonGateway({
    ...common,
    ids: o.ids,
    socketDir: o.socketDir,
    workerCount: DEMO_WORKERS,
    workDir: o.paths.projectDir,
    managerRunner: o.runnerFor(MANAGER_NAME),
    workerRunner: (n) => o.runnerFor(workerName(n)),
  });
  const agentSync = createAgentSyncGateway({
    ...common,
    agents: AGENT_SYNC_PEERS,
    cwd: o.paths.agentSyncDir,
    port: 0,
    isFresh: true,
  });
  return { http, yadon, agentSync, all: [http, yadon, agentSync] };
}
