import type { AgentBackend } from '../../agents/agent-runner.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { DEMO_TEAM } from './demo-config.js';
import type { DemoProgress } from './demo-progress.js';
import { testerPrompt, scribePrompt } from './demo-prompts.js';
import type { DemoReport } from './demo-report.js';
import { registerDemoTeam } from './demo-runners.js';
import { diffSnapshots, snapshotFiles, type FileSnapshot } from './file-changes.js';
import type { SampleTestRun, TestCounts } from './sample-tests.js';
import { runScribe, SCRIBE, writeChangelog, type ChangelogOutcome } from './scribe.js';
import type { DemoHub } from './start-demo-hub.js';
import {
  currentRound,
  endSession,
  joinPeers,
  runLeadRound,
  runTester,
  type PeerOptions,
  type TestVerdict,
} from './test-round.js';
import { submitGoal, type YadonJobResult } from './yadon-job.js';
import type { YadonPhaseTracker } from './yadon-phase-tracker.js';

/** The part of the report the team's work decides. */
export type TeamOutcome = Pick<
  DemoReport,
  'testsBefore' | 'testsAfter' | 'yadon' | 'verdict' | 'changelog' | 'isSuccess' | 'error'
>;

/** Options of {@link runTeam}. */
export interface RunTeamOptions {
  readonly demoHub: DemoHub;
  readonly backend: AgentBackend;
  readonly progress: DemoProgress;
  readonly tracker: YadonPhaseTracker;
  readonly goal: string;
  readonly projectDir: string;
  /** The scratch project before the team started. */
  readonly before: FileSnapshot;
  readonly turnTimeoutMs: number;
  readonly runTimeoutMs: number;
  readonly signal: AbortSignal;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly testsRun: () => Promise<SampleTestRun>;
  readonly testsBefore: TestCounts | undefined;
}

function errorText(err: unknown, signal: AbortSignal): string {
  if (signal.aborted) return signal.reason instanceof Error ? signal.reason.message : 'stopped';
  return err instanceof Error ? err.message : String(err);
}

/**
 * The team's work after set-up: members joined and listening, the goal to yadoran over its socket (plan,
 * implement, docs, review), the agent_sync test round between lead and tester, the changelog through
 * the scribe's bus mailbox (the injected fault: retries, dead letter, retry from the dead letters), then
 * the sample's own tests. A failing step marks its phase failed and ends the run; the background peers
 * are stopped before this resolves. Never rejects.
 */
export async function runTeam(o: RunTeamOptions): Promise<TeamOutcome> {
  const { demoHub, progress } = o;
  const team = new AbortController();
  const signal = AbortSignal.any([o.signal, team.signal]);
  const peer: PeerOptions = { target: demoHub.agentSync, signal, progress };
  const background: Promise<void>[] = [];
  let yadon: YadonJobResult | undefined;
  let verdict: TestVerdict | undefined;
  let changelog: ChangelogOutcome | undefined;
  let testsAfter: SampleTestRun | undefined;
  try {
    await registerDemoTeam(demoHub.directory, o.backend);
    await joinPeers(peer);
    progress.finish('setup', `${DEMO_TEAM.length} members joined: yadon ×3, agent_sync ×2, bus ×1`);
    const turn = { projectDir: o.projectDir, turnTimeoutMs: o.turnTimeoutMs };
    const tester = runTester({ ...peer, ...turn, runner: demoHub.runnerFor('tester') });
    const scribe = runScribe({
      ...turn,
      bus: demoHub.hub.bus,
      runner: demoHub.runnerFor(SCRIBE),
      signal,
      logger: o.logger,
    }).catch((err: unknown) => o.logger.error({ err }, 'the scribe stopped'));
    background.push(tester, scribe);
    // A tester failing early must not go unhandled while the yadon job runs; the error surfaces when awaited.
    tester.catch(() => undefined);

    progress.start('plan', 1, 'lead gave the goal to yadoran over its yadon socket');
    yadon = await submitGoal({
      socketDir: demoHub.socketDir,
      instruction: o.goal,
      projectDir: o.projectDir,
      clock: o.clock,
      timeoutMs: o.runTimeoutMs,
      signal,
    });
    o.tracker.settle(yadon);

    progress.start('test', 4, 'agent_sync round 1: lead and tester');
    const [leadVerdict] = await Promise.all([
      runLeadRound({ ...peer, implSummary: yadon.summary, testerPrompt: testerPrompt(yadon.summary) }),
      tester,
    ]);
    verdict = leadVerdict;
    const round = await currentRound(peer);
    const closed = `round 1 closed (agent_sync now in round ${round}): ${verdict.summary}`;
    if (verdict.passed) progress.finish('test', closed);
    else progress.fail('test', closed);

    const changed = diffSnapshots(o.before, await snapshotFiles(o.projectDir)).map((c) => c.path);
    changelog = await writeChangelog({
      bus: demoHub.hub.bus,
      prompt: scribePrompt({ changedFiles: changed, verdict: verdict.summary }),
      progress,
      timeoutMs: o.runTimeoutMs,
      signal,
      clock: o.clock,
    });
    await endSession(peer);

    progress.start('verify', 1, "running the sample's own tests");
    testsAfter = await o.testsRun();
    const counts = testsAfter.counts;
    const said = counts === undefined ? 'no test totals' : `${counts.pass} of ${counts.tests} tests pass`;
    if (testsAfter.isPassed) progress.finish('verify', `node --test: ${said}`);
    else progress.fail('verify', `node --test: ${said}`);
    // The goal is met when the sample's own tests pass; the changelog shows the dead-letter path.
    const isSuccess = testsAfter.isPassed && changelog.isDone;
    return { testsBefore: o.testsBefore, testsAfter, yadon, verdict, changelog, isSuccess };
  } catch (err) {
    const error = errorText(err, o.signal);
    const phase = progress.current() ?? 'setup';
    progress.fail(phase, error);
    return { testsBefore: o.testsBefore, testsAfter, yadon, verdict, changelog, isSuccess: false, error };
  } finally {
    team.abort(new Error('the demo run is over'));
    await Promise.allSettled(background);
  }
}
