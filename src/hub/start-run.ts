import type { RunResult } from '../runs/run-engine.js';
import { httpSetup } from './gateway-setups.js';
import { openHub, type Hub } from './hub.js';
import { isFinishedRun, type RunRecord } from '../runs/run-record.js';
import {
  executeOnBus,
  prepareRun,
  runHubOptions,
  withRunLedger,
  type RunExecutionOptions,
  type RunRequest,
} from './run-execution.js';
import { startConfiguredHub } from './start-configured-hub.js';

export { runStoreOf, withRunLedger, type RunRequest } from './run-execution.js';

/** Options of {@link startRun} and {@link resumeRun}. */
export interface StartRunOptions extends RunExecutionOptions {
  /** Serve the dashboard on the run's store while it runs (port 0: any free port); its URL goes to `onDashboard`. */
  readonly dashboardPort?: number;
  readonly onDashboard?: (url: string) => void;
}

/** Opens the run store's hub (with the dashboard when asked) and runs `record` on it. */
async function execute(o: StartRunOptions, record: RunRecord, isNew: boolean): Promise<RunResult> {
  const { gitDir, hub: base } = await runHubOptions(o, record.repo);
  let hub: Hub;
  if (o.dashboardPort === undefined) hub = await openHub(base);
  else {
    const configured = await startConfiguredHub({
      ...base,
      env: o.env,
      installed: o.installed,
      gateways: { http: { ...httpSetup(base.config, record.repo, o.env), port: o.dashboardPort } },
    });
    hub = configured;
    const url = configured.byKind.http?.loginUrl();
    if (url !== undefined) o.onDashboard?.(url);
  }
  try {
    return await executeOnBus(o, record, isNew, hub.bus, gitDir);
  } finally {
    await hub.close();
  }
}

/**
 * Starts `musubi run`: checks the repository, the team and the agents (see `prepareRun`), records the
 * run and runs it to its end on the branch `musubi/<run-id>` from the current HEAD.
 */
export async function startRun(o: StartRunOptions, request: RunRequest): Promise<RunResult> {
  return execute(o, await prepareRun(o, request), true);
}

/**
 * `musubi run --resume <id>`: continues a run from its last finished step (a finished run is returned
 * as it is). A raised budget replaces the recorded one.
 */
export async function resumeRun(
  o: StartRunOptions,
  repo: string,
  id: string,
  budget: { readonly usd?: number; readonly tokens?: number } = {},
): Promise<RunResult> {
  const record = await withRunLedger(o, repo, (ledger) => ledger.get(id));
  if (isFinishedRun(record.status)) return { record };
  return execute(o, { ...record, budget: { ...record.budget, ...budget } }, false);
}
