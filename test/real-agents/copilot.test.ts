import { execFile } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AgentRunEvent, AgentRunInput, AgentRunResult } from '../../src/agents/agent-runner.js';
import { CliAgentRunner } from '../../src/agents/cli/cli-agent-runner.js';
import { copilotBackend } from '../../src/agents/copilot/copilot-backend.js';
import { wireCopilot } from '../../src/agents/copilot/copilot-wiring.js';
import type { ConversationView } from '../../src/agents/model-endpoint/conversation.js';
import { ModelEndpoint } from '../../src/agents/model-endpoint/model-endpoint.js';
import {
  binaryFor,
  gone,
  isolatedEnv,
  liveWith,
  makeSandbox,
  nobody,
  type Owner,
  PINS,
  realCliGuard,
  recordingDialects,
  writeWiringFiles,
} from './real-cli.js';

const bin = realCliGuard('copilot');
const VERSION = PINS.copilot.version;
const TURN_MS = 60_000;
/** A test with a few real turns (copilot starts in about 1 s; a retried request waits 1–4 s more). */
const TEST_MS = 120_000;
/**
 * Copilot is a single executable that unpacks its JavaScript (about 235 MB) into a cache folder on first
 * start; every test shares one unpacked copy (readable by `nobody`) instead of unpacking per sandbox.
 */
const PKG_CACHE = join(tmpdir(), `musubi-copilot-pkg-${VERSION}`);
const run = promisify(execFile);

/** The native copilot executable behind the npm loader script (`.bin/copilot` → npm-loader.js). */
function nativeBinary(loaderBin: string): string {
  const modules = join(dirname(loaderBin), '..');
  return join(modules, '@github', `copilot-linux-${process.arch}`, 'copilot');
}

/** One real copilot against its own endpoint and sandbox. */
async function harness(loaderBin: string, owner?: Owner) {
  const views: ConversationView[] = [];
  const endpoint = new ModelEndpoint({ dialects: recordingDialects(views) });
  const url = await endpoint.start();
  const sandbox = await makeSandbox(owner);
  const binary = await binaryFor(owner, loaderBin, nativeBinary(loaderBin));
  const wiring = wireCopilot({ url, configDir: join(sandbox.home, '.copilot') });
  await writeWiringFiles(wiring.files, owner);
  const runner = new CliAgentRunner({
    backend: copilotBackend,
    command: binary.path,
    env: isolatedEnv(sandbox.home),
    extraEnv: { ...wiring.env, COPILOT_PKG_CACHE_HOME: PKG_CACHE },
    ...(wiring.model !== undefined && { model: wiring.model }),
    ...(owner !== undefined && { runAs: owner }),
  });
  const turn = (
    input: Omit<AgentRunInput, 'cwd' | 'timeoutMs'> & { timeoutMs?: number },
  ): Promise<AgentRunResult> => runner.run({ cwd: sandbox.cwd, timeoutMs: TURN_MS, ...input });
  /** The endpoint's usage for the requests answered in full since `from` (errors and cut streams have none). */
  const usageSince = (from: number) => {
    const answered = endpoint
      .requests()
      .slice(from)
      .filter((r) => r.status === 200 && r.isCut !== true);
    return {
      inputTokens: answered.reduce((n, r) => n + (r.usage?.inputTokens ?? 0), 0),
      outputTokens: answered.reduce((n, r) => n + (r.usage?.outputTokens ?? 0), 0),
      costUsd: 0,
    };
  };
  return {
    endpoint,
    sandbox,
    views,
    turn,
    usageSince,
    async [Symbol.asyncDispose]() {
      await endpoint.close();
      await binary[Symbol.asyncDispose]();
      await sandbox[Symbol.asyncDispose]();
    },
  };
}

if (bin !== undefined) {
  const loaderBin = bin;
  describe.concurrent(`real copilot ${VERSION} against the model endpoint`, () => {
    beforeAll(async () => {
      // Unpack once, as root, before the concurrent tests start (and before any runs as `nobody`).
      await mkdir(PKG_CACHE, { recursive: true, mode: 0o755 });
      await run(loaderBin, ['--version'], {
        env: { ...isolatedEnv(tmpdir()), COPILOT_PKG_CACHE_HOME: PKG_CACHE },
      });
    }, TEST_MS);

    it(
      'replies, reports its session and this turn usage, and resumes the session with --resume',
      { timeout: TEST_MS },
      async () => {
        await using h = await harness(loaderBin);
        const first = await h.turn({ prompt: 'MUSUBI-MODEL: {"reply":"hello from the endpoint"}' });
        expect(first).toMatchObject({ isError: false, exitCode: 0, text: 'hello from the endpoint' });
        expect(first.sessionId).toMatch(/^[0-9a-f-]{36}$/);
        expect(first.usage).toEqual(h.usageSince(0));
        expect(first.usage?.inputTokens).toBeGreaterThan(0);

        const before = h.endpoint.requests().length;
        const second = await h.turn({
          prompt: 'MUSUBI-MODEL: {"reply":"second answer"}',
          ...(first.sessionId !== undefined && { sessionId: first.sessionId }),
        });
        expect(second).toMatchObject({ isError: false, text: 'second answer', sessionId: first.sessionId });
        // The usage file holds the session's totals; the backend reports this turn's share only.
        expect(second.usage).toEqual(h.usageSince(before));
        const resumed = h.views.at(-1);
        expect(resumed?.userTexts.some((t) => t.includes('hello from the endpoint'))).toBe(true);
        expect(resumed?.userTexts.at(-1)).toContain('second answer');
      },
    );

    it(
      'gets the exact prompt to the model: quotes, newlines, non-ASCII and 200 KB',
      { timeout: TEST_MS },
      async () => {
        await using h = await harness(loaderBin);
        const tricky = `MUSUBI-MODEL: {"reply":"ok"}\nsay "hi" and 'bye' $HOME \`x\` \\n -p --model\nünïcødé 日本語 🙂\n\ttabbed`;
        const small = await h.turn({ prompt: tricky });
        expect(small.isError).toBe(false);
        expect(h.endpoint.requests().at(-1)?.prompt).toContain(tricky);

        const big = `MUSUBI-MODEL: {"reply":"big ok"}\nBIG START\n${`${'abcdefghij'.repeat(20)}\n`.repeat(1024)}BIG END`;
        expect(big.length).toBeGreaterThan(200 * 1024);
        const large = await h.turn({ prompt: big });
        expect(large).toMatchObject({ isError: false, text: 'big ok' });
        expect(h.endpoint.requests().at(-1)?.prompt).toContain(big);
      },
    );

    it('writes a file in cwd through its create tool', { timeout: TEST_MS }, async () => {
      await using h = await harness(loaderBin);
      const events: AgentRunEvent[] = [];
      const result = await h.turn({
        prompt: 'MUSUBI-MODEL: {"write":{"path":"a.txt","content":"hi\\n"}}',
        onEvent: (e) => events.push(e),
      });
      // The transcript: the create call as an edit of a.txt and its result.
      expect(events.filter((e) => e.type === 'tool')).toEqual([
        expect.objectContaining({ name: 'create', kind: 'edit', summary: expect.stringContaining('a.txt') }),
      ]);
      expect(events.filter((e) => e.type === 'tool_result')).toEqual([
        expect.objectContaining({ isError: false }),
      ]);
      expect(result).toMatchObject({ isError: false, text: 'Done.' });
      expect(await readFile(join(h.sandbox.cwd, 'a.txt'), 'utf8')).toBe('hi\n');
      expect(h.endpoint.requests().map((r) => r.answer)).toEqual(['tool create', 'text']);
      expect(h.views.at(-1)?.toolResultsSinceUser).toBe(1);
      // Two model calls in one turn: both counted.
      expect(result.usage).toEqual(h.usageSince(0));
    });

    it('fails with the API error message when the endpoint answers 400', { timeout: TEST_MS }, async () => {
      await using h = await harness(loaderBin);
      const result = await h.turn({
        prompt: 'MUSUBI-MODEL: {"error":{"status":400,"message":"the model says no"}}',
      });
      expect(result.isError).toBe(true);
      expect(result.exitCode).toBe(1);
      expect(result.errorMessage).toContain('the model says no');
      // A 400 is not retried.
      expect(h.endpoint.requests()).toHaveLength(1);
    });

    it('retries a flaky 503 and a cut stream, then succeeds', { timeout: TEST_MS }, async () => {
      await using h = await harness(loaderBin);
      const flaky = await h.turn({ prompt: 'MUSUBI-MODEL: {"flaky":{"then":{"reply":"after flaky"}}}' });
      expect(flaky).toMatchObject({ isError: false, text: 'after flaky' });
      expect(h.endpoint.requests().map((r) => r.status)).toEqual([503, 200]);
      expect(flaky.usage).toEqual(h.usageSince(0));

      const before = h.endpoint.requests().length;
      const cut = await h.turn({ prompt: 'MUSUBI-MODEL: {"cut":{"then":{"reply":"after cut"}}}' });
      expect(cut).toMatchObject({ isError: false, text: 'after cut' });
      const retried = h.endpoint.requests().slice(before);
      expect(retried.map((r) => r.isCut === true)).toEqual([true, false]);
      expect(cut.usage).toEqual(h.usageSince(before));
    });

    it('stops the whole process tree on timeout and on cancel', { timeout: TEST_MS }, async () => {
      await using h = await harness(loaderBin);
      const marker = h.sandbox.home;
      const timedOut = await h.turn({ prompt: 'MUSUBI-MODEL: "hang"', timeoutMs: 4_000 });
      expect(timedOut).toMatchObject({ isError: true, timedOut: true });
      expect(await gone(() => liveWith(marker))).toEqual([]);

      const controller = new AbortController();
      const canceled = await h.turn({
        prompt: 'MUSUBI-MODEL: "hang"',
        signal: controller.signal,
        // Cancel once the model call is under way.
        onEvent: (e) => {
          if (e.type === 'line' && e.line.includes('"model.call_start"')) controller.abort();
        },
      });
      expect(canceled).toMatchObject({ isError: true, canceled: true });
      expect(await gone(() => liveWith(marker))).toEqual([]);
    });

    const owner = nobody();
    it.skipIf(owner === undefined)(
      'runs a turn as an unprivileged user (nobody)',
      { timeout: TEST_MS },
      async () => {
        if (owner === undefined) return;
        await using h = await harness(loaderBin, owner);
        const result = await h.turn({
          prompt: 'MUSUBI-MODEL: {"write":{"path":"b.txt","content":"as nobody\\n"}}',
        });
        expect(result).toMatchObject({ isError: false, text: 'Done.' });
        expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
        expect(result.usage).toEqual(h.usageSince(0));
        expect(await readFile(join(h.sandbox.cwd, 'b.txt'), 'utf8')).toBe('as nobody\n');
      },
    );
    if (owner === undefined) console.warn('SKIP real copilot as nobody: this process is not root');
  });
}
