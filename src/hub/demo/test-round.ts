import { z } from 'zod';
import type { AgentRunner } from '../../agents/agent-runner.js';
import { MusubiError } from '../../core/errors.js';
import { callAgentSync, type AgentSyncTarget } from './agent-sync-call.js';
import type { DemoProgress } from './demo-progress.js';
import { parseTapCounts } from './sample-tests.js';
import { shortText } from './yadon-phase-tracker.js';

/** Seconds one listen waits before the peer asks again. */
const LISTEN_SECONDS = 20;
/** Most test output the tester reports (agent_sync stores at most 61,000 bytes per result). */
const MAX_OUTPUT_CHARS = 8_000;

const mailSchema = z.object({ from: z.string(), type: z.string(), text: z.string() });
type Mail = z.infer<typeof mailSchema>;
const listenSchema = z.object({ messages: z.array(mailSchema) });
const statusSchema = z.object({
  data: z.object({
    round: z.number(),
    test_result: z.object({ passed: z.boolean(), output: z.string() }).nullable(),
  }),
});

/** What the tester reported, as the lead read it from agent_sync's `status`. */
export interface TestVerdict {
  readonly passed: boolean;
  readonly output: string;
  /** `8 of 8 tests pass`, or the tester's first line when its output has no TAP totals. */
  readonly summary: string;
}

/** Everything a peer needs to talk to the agent_sync gateway. */
export interface PeerOptions {
  readonly target: AgentSyncTarget;
  readonly signal: AbortSignal;
  readonly progress: DemoProgress;
}

function call(o: PeerOptions, request: Record<string, unknown>): Promise<Record<string, unknown>> {
  return callAgentSync(o.target, request, { timeoutMs: 30_000, signal: o.signal });
}

/** Listens as `agent` until a message `match`es; what comes before it (phase changes) is read and dropped. */
async function waitForMail(o: PeerOptions, agent: string, match: (m: Mail) => boolean): Promise<Mail> {
  for (;;) {
    const reply = await callAgentSync(
      o.target,
      { cmd: 'listen', agent, timeout: LISTEN_SECONDS },
      { timeoutMs: (LISTEN_SECONDS + 15) * 1000, signal: o.signal },
    );
    const parsed = listenSchema.safeParse(reply);
    if (!parsed.success)
      throw new MusubiError('GATEWAY_FRAME_INVALID', 'agent_sync listen reply without messages');
    const found = parsed.data.messages.find(match);
    if (found !== undefined) return found;
  }
}

function verdictOf(passed: boolean, output: string): TestVerdict {
  const counts = parseTapCounts(output);
  const summary =
    counts === undefined
      ? `no test totals in the answer (${shortText(output, 60)})`
      : `${counts.pass} of ${counts.tests} tests pass`;
  return { passed, output, summary };
}

/** Joins the two agent_sync peers, the lead first so it is the round's implementer. */
export async function joinPeers(o: PeerOptions): Promise<void> {
  await call(o, { cmd: 'join', agent: 'lead' });
  await call(o, { cmd: 'join', agent: 'tester' });
}

/**
 * The tester peer: listens (parked on agent_sync while the other teams work) until the lead asks it to
 * test, runs that request as an agent turn in `projectDir`, reports `test-result` (TEST → DISCUSS),
 * says its verdict in the discussion and marks itself done. Rejects when agent_sync fails or `signal`
 * aborts.
 */
export async function runTester(
  o: PeerOptions & {
    readonly runner: AgentRunner;
    readonly projectDir: string;
    readonly turnTimeoutMs: number;
  },
): Promise<void> {
  const request = await waitForMail(o, 'tester', (m) => m.from === 'lead' && m.type === 'message');
  o.progress.note('test', 'tester got the request over agent_sync and runs the suite');
  const result = await o.runner.run({
    prompt: request.text,
    cwd: o.projectDir,
    timeoutMs: o.turnTimeoutMs,
    signal: o.signal,
  });
  const counts = parseTapCounts(result.text);
  // Passed needs evidence: test totals in the answer (a real CLI is asked to answer with the output).
  const passed = !result.isError && counts !== undefined && counts.fail === 0;
  const failures = [...result.text.matchAll(/^not ok \d+ - (.+)$/gm)].flatMap((m) => m[1] ?? []);
  const output = result.text.slice(-MAX_OUTPUT_CHARS);
  await call(o, { cmd: 'test-result', agent: 'tester', passed, output, failures });
  const verdict = verdictOf(passed, output);
  o.progress.advance('test', `tester reported test-result: ${verdict.summary}`);
  await call(o, {
    cmd: 'discuss',
    agent: 'tester',
    text: `tester: ${passed ? 'green' : 'red'}, ${verdict.summary}`,
  });
  await call(o, { cmd: 'discuss-done', agent: 'tester', next_implementer: 'lead' });
}

/**
 * The lead's side of the round: `impl-done` with the yadon team's summary (IMPLEMENT → TEST), the test
 * request to the tester, then — once the tester has spoken in the discussion — the stored test result
 * from `status`, its own word and `discuss-done`. Resolves the tester's verdict.
 */
export async function runLeadRound(
  o: PeerOptions & { readonly implSummary: string; readonly testerPrompt: string },
): Promise<TestVerdict> {
  await call(o, { cmd: 'impl-done', agent: 'lead', summary: o.implSummary });
  o.progress.advance('test', 'lead called impl-done: agent_sync phase IMPLEMENT → TEST');
  await call(o, { cmd: 'send', agent: 'lead', to: 'tester', text: o.testerPrompt });
  const said = await waitForMail(o, 'lead', (m) => m.from === 'tester' && m.type === 'discuss');
  const status = statusSchema.safeParse(await call(o, { cmd: 'status' }));
  const stored = status.success ? status.data.data.test_result : null;
  const verdict = verdictOf(stored?.passed ?? false, stored?.output ?? said.text);
  o.progress.advance('test', `discussion: ${said.text}`);
  await call(o, {
    cmd: 'discuss',
    agent: 'lead',
    text: 'lead: thanks; the scribe writes the changelog next.',
  });
  await call(o, { cmd: 'discuss-done', agent: 'lead', next_implementer: 'lead' });
  return verdict;
}

/** The round number agent_sync is in now (2 once both peers are done with round 1). */
export async function currentRound(o: PeerOptions): Promise<number> {
  const status = statusSchema.safeParse(await call(o, { cmd: 'status' }));
  if (!status.success) throw new MusubiError('GATEWAY_FRAME_INVALID', 'agent_sync status reply without data');
  return status.data.data.round;
}

/** Ends the agent_sync session (phase SHUTDOWN); the gateway keeps serving. */
export async function endSession(o: PeerOptions): Promise<void> {
  await call(o, { cmd: 'shutdown', reason: 'musubi demo completed' });
}
