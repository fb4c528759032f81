import { mkdir } from 'node:fs/promises';
import type { AgentBackend } from '../../agents/agent-runner.js';
import { ChildReaper } from '../../agents/process/child-reaper.js';
import type { Clock } from '../../core/clock.js';
import { createDeadlineSignal } from '../../core/deadline-signal.js';
import { createIdGenerator } from '../../core/ids.js';
import type { Logger, LogLevel } from '../../core/logger.js';
import type { AgentSyncTarget } from './agent-sync-call.js';
import { copySample, locateBundledSample, readGoal, type BundledSample } from './bundled-sample.js';
import {
  clearDemoState,
  DEMO_TEAM,
  demoConfig,
  demoTimeouts,
  type DemoMember,
  type DemoPaths,
} from './demo-config.js';
import { DemoProgress, type ProgressChange } from './demo-progress.js';
import { countMessages, type DemoReport } from './demo-report.js';
import { runTeam, type TeamOutcome } from './run-team.js';
import { SCRIBE } from './scribe.js';
import { diffSnapshots, snapshotFiles } from './file-changes.js';
import { runSampleTests } from './sample-tests.js';
import { startDemoHub } from './start-demo-hub.js';
import { YadonPhaseTracker } from './yadon-phase-tracker.js';

/** What the terminal says before the bars: where everything is. */
export interface DemoReady {
  readonly backend: AgentBackend;
  readonly goalTitle: string;
  readonly dashboardUrl: string;
  readonly agentSync: AgentSyncTarget;
  readonly socketDir: string;
  readonly paths: DemoPaths;
  readonly team: readonly DemoMember[];
  /** The injected fault, in words. */
  readonly fault: string;
}

/** Options of {@link runDemo}. */
export interface RunDemoOptions {
  readonly cwd: string;
  readonly paths: DemoPaths;
  readonly backend: AgentBackend;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  readonly logLevel: LogLevel;
  readonly clock: Clock;
  /** The node binary that runs the sample's tests (`process.execPath`). */
  readonly nodePath: string;
  /** Dashboard port; 0 picks a free one. */
  readonly dashboardPort: number;
  /** Default: the sample bundled with this install. */
  readonly sample?: BundledSample;
  /** Aborting (Ctrl-C) stops the run; the report then says where it stopped. */
  readonly signal: AbortSignal;
  readonly onProgress: (change: ProgressChange) => void;
  readonly onReady: (ready: DemoReady) => void;
}

/** A finished run whose hub is still up (the dashboard keeps serving until `close`). */
export interface DemoRun extends AsyncDisposable {
  readonly report: DemoReport;
  readonly dashboardUrl: string;
  /** Stops the hub and removes the socket folder. Idempotent. */
  close(): Promise<void>;
}

/**
 * Runs the demo: a fresh scratch copy of the bundled sample, the sample's tests before, a hub on SQLite
 * with the dashboard, the mixed team working the bundled goal (yadon: plan, implement, docs, review;
 * agent_sync: test round; bus: changelog with the injected fault, its retries and the dead letter
 * retried by the lead), then the sample's tests after. Progress goes to `onProgress`. Resolves with the
 * report once the team is done and the hub still runs; a failing step is recorded in the report, not
 * thrown. Rejects only when the state folder, the sample or the hub cannot be set up.
 */
export async function runDemo(o: RunDemoOptions): Promise<DemoRun> {
  const { clock, paths } = o;
  const startedAt = clock.now();
  const sample = o.sample ?? locateBundledSample();
  const goal = await readGoal(sample.goalFile);
  const progress = new DemoProgress({ clock, onChange: o.onProgress });
  progress.start('setup', 4);
  await mkdir(paths.stateDir, { recursive: true });
  await clearDemoState(paths);
  await mkdir(paths.agentSyncDir, { recursive: true });
  await copySample(sample, paths.projectDir);
  const before = await snapshotFiles(paths.projectDir);
  progress.advance('setup');

  const reaper = new ChildReaper();
  const timeouts = demoTimeouts(o.backend);
  // Disposed when runDemo returns: the team and both test runs are over by then.
  using deadline = createDeadlineSignal({ signals: [o.signal], timeoutMs: timeouts.runMs, clock });
  const stop = deadline.signal;
  const testsRun = (signal: AbortSignal) =>
    runSampleTests({
      projectDir: paths.projectDir,
      nodePath: o.nodePath,
      env: o.env,
      reaper,
      timeoutMs: timeouts.turnMs,
      signal,
    });
  const baseline = testsRun(stop);
  const config = demoConfig(paths, o.logLevel);
  const fault = {
    agent: SCRIBE,
    count: config.bus.retry.maxAttempts,
    reason: `injected failure (musubi demo): the scribe fails its first ${config.bus.retry.maxAttempts} turns`,
  };
  const tracker = new YadonPhaseTracker({ progress, instruction: goal.text });
  const demoHub = await startDemoHub({
    config,
    cwd: o.cwd,
    paths,
    logger: o.logger,
    clock,
    ids: createIdGenerator(clock),
    env: o.env,
    backend: o.backend,
    dashboardPort: o.dashboardPort,
    progress,
    goal: goal.text,
    tracker,
    fault,
  }).catch(async (err: unknown) => {
    await baseline.catch(() => undefined);
    throw err;
  });
  progress.advance('setup');
  o.onReady({
    backend: o.backend,
    goalTitle: goal.title,
    dashboardUrl: demoHub.dashboardUrl,
    agentSync: demoHub.agentSync,
    socketDir: demoHub.socketDir,
    paths,
    team: DEMO_TEAM,
    fault: fault.reason,
  });

  let outcome: TeamOutcome;
  try {
    const testsBefore = (await baseline).counts;
    progress.advance(
      'setup',
      testsBefore === undefined
        ? 'the sample tests did not report totals'
        : `sample tests before the team: ${testsBefore.fail} of ${testsBefore.tests} fail`,
    );
    outcome = await runTeam({
      demoHub,
      backend: o.backend,
      progress,
      tracker,
      goal: goal.text,
      projectDir: paths.projectDir,
      before,
      turnTimeoutMs: timeouts.turnMs,
      runTimeoutMs: timeouts.runMs,
      signal: stop,
      clock,
      logger: o.logger,
      testsRun: () => testsRun(stop),
      testsBefore,
    });
  } catch (err) {
    await demoHub.close();
    throw err;
  }
  const changes = diffSnapshots(before, await snapshotFiles(paths.projectDir));
  const report: DemoReport = {
    ...outcome,
    backend: o.backend,
    goalTitle: goal.title,
    changes,
    messages: await countMessages(demoHub.hub.bus),
    durationMs: clock.now() - startedAt,
    projectDir: paths.projectDir,
  };
  return {
    report,
    dashboardUrl: demoHub.dashboardUrl,
    close: demoHub.close,
    [Symbol.asyncDispose]: demoHub.close,
  };
}
