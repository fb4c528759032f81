import { readFile } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentRunEvent, AgentRunInput, AgentRunResult } from '../../src/agents/agent-runner.js';
import { CliAgentRunner } from '../../src/agents/cli/cli-agent-runner.js';
import type { ConversationView } from '../../src/agents/model-endpoint/conversation.js';
import { ModelEndpoint } from '../../src/agents/model-endpoint/model-endpoint.js';
import { opencodeBackend } from '../../src/agents/opencode/opencode-backend.js';
import { wireOpencode } from '../../src/agents/opencode/opencode-wiring.js';
import {
  binaryFor,
  gone,
  isolatedEnv,
  liveWith,
  makeSandbox,
  nobody,
  type Owner,
  realCliGuard,
  recordingDialects,
  writeWiringFiles,
} from './real-cli.js';

const bin = realCliGuard('opencode');
const TURN_MS = 60_000;
/** A test with at most a few real turns (opencode starts in 2–5 s; slower on a loaded machine). */
const TEST_MS = 150_000;
/**
 * The timeout of the turns that must be stopped: long enough for opencode to reach the hanging model
 * request or the running shell command even on a loaded machine (a cold start there takes up to ~20 s).
 */
const STOP_AFTER_MS = 40_000;

/** Live processes in a process group (the runner starts the CLI as a group leader). */
function liveInGroup(pgid: number): string[] {
  const out: string[] = [];
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z')
        out.push(`${entry} ${readFileSync(`/proc/${entry}/cmdline`, 'utf8')}`);
    } catch {
      // Gone between readdir and read.
    }
  }
  return out;
}

/** Ends a process group this test caused (a shell command the CLI left behind). */
function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** A proxy on loopback that refuses everything and remembers where each request wanted to go. */
async function refusingProxy(): Promise<{
  url: string;
  targets: string[];
  [Symbol.asyncDispose](): Promise<void>;
}> {
  const targets: string[] = [];
  const server = createServer((req, res) => {
    targets.push(req.url ?? '');
    res.writeHead(502).end();
  });
  server.on('connect', (req, socket) => {
    targets.push(req.url ?? '');
    socket.on('error', () => undefined);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    targets,
    [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** One real opencode against its own endpoint and sandbox; `proxy` replaces the closed-port proxy. */
async function harness(realBin: string, owner?: Owner, proxy?: string) {
  const views: ConversationView[] = [];
  const endpoint = new ModelEndpoint({ dialects: recordingDialects(views) });
  const url = await endpoint.start();
  const sandbox = await makeSandbox(owner);
  const binary = await binaryFor(owner, realBin);
  const wiring = wireOpencode({ url, configDir: sandbox.home });
  await writeWiringFiles(wiring.files, owner);
  const runner = new CliAgentRunner({
    backend: opencodeBackend,
    command: binary.path,
    env: isolatedEnv(sandbox.home),
    extraEnv: {
      ...wiring.env,
      ...(proxy !== undefined && {
        HTTP_PROXY: proxy,
        HTTPS_PROXY: proxy,
        http_proxy: proxy,
        https_proxy: proxy,
      }),
    },
    ...(wiring.model !== undefined && { model: wiring.model }),
    ...(owner !== undefined && { runAs: owner }),
  });
  const run = (
    input: Omit<AgentRunInput, 'cwd' | 'timeoutMs'> & { timeoutMs?: number },
  ): Promise<AgentRunResult> => runner.run({ cwd: sandbox.cwd, timeoutMs: TURN_MS, ...input });
  /** The endpoint's usage for the agent's own requests answered in full since `from` (side requests have no tools). */
  const usageSince = (from: number) => {
    const answered = endpoint
      .requests()
      .slice(from)
      .filter((r) => (r.tools?.length ?? 0) > 0 && r.status === 200 && r.isCut !== true);
    return {
      inputTokens: answered.reduce((n, r) => n + (r.usage?.inputTokens ?? 0), 0),
      outputTokens: answered.reduce((n, r) => n + (r.usage?.outputTokens ?? 0), 0),
    };
  };
  /** The last request of the agent itself (with tools) whose prompt is `prompt`. */
  const agentView = (prompt: string) =>
    views.filter((v) => v.tools.length > 0 && v.userTexts.at(-1) === prompt).at(-1);
  return {
    endpoint,
    sandbox,
    views,
    run,
    usageSince,
    agentView,
    async [Symbol.asyncDispose]() {
      await endpoint.close();
      await binary[Symbol.asyncDispose]();
      await sandbox[Symbol.asyncDispose]();
    },
  };
}

if (bin !== undefined) {
  const realBin = bin;
  describe.concurrent('real opencode 1.18.33 against the model endpoint', () => {
    it(
      'replies, reports its session and this turn usage, and resumes the session with --session',
      { timeout: TEST_MS },
      async () => {
        await using proxy = await refusingProxy();
        await using h = await harness(realBin, undefined, proxy.url);
        const first = await h.run({ prompt: 'MUSUBI-MODEL: {"reply":"first answer"}' });
        expect(first).toMatchObject({ isError: false, exitCode: 0, text: 'first answer' });
        expect(first.sessionId).toMatch(/^ses_/);
        expect(first.usage).toEqual({ ...h.usageSince(0), costUsd: 0 });

        const before = h.endpoint.requests().length;
        const second = await h.run({
          prompt: 'MUSUBI-MODEL: {"reply":"second answer"}',
          sessionId: first.sessionId ?? '',
        });
        expect(second).toMatchObject({ isError: false, text: 'second answer', sessionId: first.sessionId });
        const resumed = h.agentView('MUSUBI-MODEL: {"reply":"second answer"}');
        expect(resumed?.userTexts).toEqual([
          'MUSUBI-MODEL: {"reply":"first answer"}',
          'MUSUBI-MODEL: {"reply":"second answer"}',
        ]);
        expect(second.usage).toEqual({ ...h.usageSince(before), costUsd: 0 });
        // The wiring leaves nothing to fetch: no models.dev refresh, npm install, update check or share.
        expect(proxy.targets).toEqual([]);
      },
    );

    it(
      'delivers the prompt exactly when it has quotes, newlines, a leading dash and non-ASCII',
      { timeout: TEST_MS },
      async () => {
        await using h = await harness(realBin);
        const prompt = `-v "double" 'single' \\"escaped\\" $HOME \`tick\`\n\tsecond line ✓ 日本語 émoji 🎉\nMUSUBI-MODEL: "echo"`;
        const result = await h.run({ prompt });
        expect(result.isError).toBe(false);
        const logged = h.endpoint.requests().filter((r) => (r.tools?.length ?? 0) > 0);
        expect(logged.at(-1)?.prompt).toBe(prompt);
        expect(result.text).toBe(prompt);
      },
    );

    it('delivers a 200 KB prompt exactly', { timeout: TEST_MS }, async () => {
      await using h = await harness(realBin);
      const line = 'The quick brown fox "jumps" over the lazy dog — 0123456789.\n';
      const prompt = `${line.repeat(Math.ceil((200 * 1024) / line.length))}MUSUBI-MODEL: {"reply":"got it"}`;
      const result = await h.run({ prompt });
      expect(result).toMatchObject({ isError: false, text: 'got it' });
      const logged = h.endpoint.requests().filter((r) => (r.tools?.length ?? 0) > 0);
      expect(logged.at(-1)?.prompt).toBe(prompt);
    });

    it(
      'writes a file in cwd through its write tool and sends the tool result back',
      { timeout: TEST_MS },
      async () => {
        await using h = await harness(realBin);
        const events: AgentRunEvent[] = [];
        const result = await h.run({
          prompt: 'MUSUBI-MODEL: {"write":{"path":"out/a.txt","content":"hi there\\n","then":"wrote it"}}',
          onEvent: (e) => events.push(e),
        });
        // The transcript: the write call as an edit of out/a.txt and its result.
        expect(events.filter((e) => e.type === 'tool')).toEqual([
          expect.objectContaining({ name: 'write', kind: 'edit', summary: expect.stringContaining('a.txt') }),
        ]);
        expect(events.filter((e) => e.type === 'tool_result')).toEqual([
          expect.objectContaining({ isError: false }),
        ]);
        expect(result).toMatchObject({ isError: false, text: 'wrote it' });
        expect(await readFile(join(h.sandbox.cwd, 'out', 'a.txt'), 'utf8')).toBe('hi there\n');
        const agent = h.endpoint.requests().filter((r) => (r.tools?.length ?? 0) > 0);
        expect(agent.map((r) => [r.answer, r.toolResultsSinceUser])).toEqual([
          ['tool write', 0],
          ['text', 1],
        ]);
        expect(result.usage).toEqual({ ...h.usageSince(0), costUsd: 0 });
      },
    );

    it(
      "fails with the API's message when the endpoint answers 400 or 401",
      { timeout: TEST_MS },
      async () => {
        await using h = await harness(realBin);
        const bad = await h.run({
          prompt: 'MUSUBI-MODEL: {"error":{"status":400,"message":"context is \\"too\\" long"}}',
        });
        expect(bad).toMatchObject({ isError: true, exitCode: 1, errorMessage: 'context is "too" long' });
        const auth = await h.run({
          prompt: 'MUSUBI-MODEL: {"error":{"status":401,"message":"invalid key for musubi"}}',
        });
        expect(auth).toMatchObject({ isError: true, errorMessage: 'invalid key for musubi' });
      },
    );

    it('retries a 503 and a cut stream and then succeeds', { timeout: TEST_MS }, async () => {
      await using h = await harness(realBin);
      const flaky = await h.run({ prompt: 'MUSUBI-MODEL: {"flaky":{"then":{"reply":"after 503"}}}' });
      expect(flaky).toMatchObject({ isError: false, text: 'after 503' });
      const statuses = h.endpoint
        .requests()
        .filter((r) => (r.tools?.length ?? 0) > 0)
        .map((r) => r.status);
      expect(statuses).toEqual([503, 200]);
      expect(flaky.usage).toEqual({ ...h.usageSince(0), costUsd: 0 });

      const before = h.endpoint.requests().length;
      const cut = await h.run({ prompt: 'MUSUBI-MODEL: {"cut":{"then":{"reply":"after cut"}}}' });
      expect(cut).toMatchObject({ isError: false, text: 'after cut' });
      const cuts = h.endpoint
        .requests()
        .slice(before)
        .filter((r) => (r.tools?.length ?? 0) > 0);
      expect(cuts.map((r) => r.isCut === true)).toEqual([true, false]);
      expect(cut.usage).toEqual({ ...h.usageSince(before), costUsd: 0 });
    });

    it('stops the whole process group on a timeout while the model hangs', { timeout: TEST_MS }, async () => {
      await using h = await harness(realBin);
      let pid = 0;
      const result = await h.run({
        prompt: 'MUSUBI-MODEL: "hang"',
        timeoutMs: STOP_AFTER_MS,
        onEvent: (e) => {
          if (e.type === 'started') pid = e.pid ?? 0;
        },
      });
      expect(result).toMatchObject({ isError: true, timedOut: true });
      expect(h.endpoint.requests().some((r) => r.answer === 'hang')).toBe(true);
      expect(pid).toBeGreaterThan(0);
      expect(await gone(() => liveInGroup(pid))).toEqual([]);
    });

    // opencode 1.18's bash tool starts each command in a session of its own (setsid) and does not stop it
    // when opencode gets SIGTERM, SIGINT or SIGHUP; the stop ladder follows such sessions (descendantGroups).
    it(
      'stops a shell command opencode started in its own session when the turn times out',
      { timeout: TEST_MS },
      async () => {
        await using h = await harness(realBin);
        const marker = `musubi-timeout-${process.pid}-${Date.now()}`;
        let pid = 0;
        try {
          const result = await h.run({
            prompt: `MUSUBI-MODEL: {"run":{"command":["sh","-c","sleep 300 # ${marker}"]}}`,
            timeoutMs: STOP_AFTER_MS,
            onEvent: (e) => {
              if (e.type === 'started') pid = e.pid ?? 0;
            },
          });
          expect(result).toMatchObject({ isError: true, timedOut: true });
          // The command really ran (the tool call reached opencode's bash tool) before the timeout.
          expect(h.endpoint.requests().some((r) => r.answer === 'tool bash')).toBe(true);
          expect(await gone(() => liveInGroup(pid))).toEqual([]);
          expect(await gone(() => liveWith(marker))).toEqual([]);
        } finally {
          for (const line of liveWith(marker)) killGroup(Number(line.split(' ')[0]));
        }
      },
    );

    it('stops the whole process tree on cancel while the model hangs', { timeout: TEST_MS }, async () => {
      await using h = await harness(realBin);
      const controller = new AbortController();
      let pid = 0;
      const running = h.run({
        prompt: 'MUSUBI-MODEL: "hang"',
        signal: controller.signal,
        onEvent: (e) => {
          if (e.type === 'started') pid = e.pid ?? 0;
        },
      });
      // Cancel once the CLI is waiting on the model (its turn request reached the endpoint).
      await gone(() => (h.endpoint.requests().some((r) => r.answer === 'hang') ? [] : ['waiting']), 45_000);
      controller.abort();
      const result = await running;
      expect(result).toMatchObject({ isError: true, canceled: true });
      expect(await gone(() => liveInGroup(pid))).toEqual([]);
    });

    const owner = nobody();
    if (owner === undefined)
      console.warn('SKIP real opencode as an unprivileged user: the tests do not run as root');
    it.skipIf(owner === undefined)(
      'runs a turn that writes a file as the unprivileged user nobody',
      { timeout: TEST_MS },
      async () => {
        if (owner === undefined) return;
        await using h = await harness(realBin, owner);
        const result = await h.run({
          prompt: 'MUSUBI-MODEL: {"write":{"path":"mine.txt","content":"by nobody\\n","then":"ok"}}',
        });
        expect(result).toMatchObject({ isError: false, text: 'ok' });
        expect(await readFile(join(h.sandbox.cwd, 'mine.txt'), 'utf8')).toBe('by nobody\n');
      },
    );
  });
}
