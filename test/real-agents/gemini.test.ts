import { spawnSync } from 'node:child_process';
import { chown, cp, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentRunEvent, AgentRunInput, AgentRunResult } from '../../src/agents/agent-runner.js';
import { CliAgentRunner } from '../../src/agents/cli/cli-agent-runner.js';
import { geminiBackend } from '../../src/agents/gemini/gemini-backend.js';
import { wireGemini } from '../../src/agents/gemini/gemini-wiring.js';
import type { ConversationView } from '../../src/agents/model-endpoint/conversation.js';
import type { Dialect } from '../../src/agents/model-endpoint/dialect.js';
import { ALL_DIALECTS } from '../../src/agents/model-endpoint/dialects/index.js';
import { ModelEndpoint } from '../../src/agents/model-endpoint/model-endpoint.js';
import { isolatedEnv, makeSandbox, type Owner, realCliGuard, writeWiringFiles } from './real-cli.js';

const bin = realCliGuard('gemini');
const NOBODY = { uid: 65534, gid: 65534 };
const isRoot = process.getuid?.() === 0;

/** One real gemini run against its own endpoint, with every request's view kept for the assertions. */
async function geminiSetup(options: { owner?: Owner; command?: string } = {}) {
  const views: ConversationView[] = [];
  // The gemini dialect, recording the views it reads (the request log keeps only the last prompt).
  const dialects = ALL_DIALECTS.map((d): Dialect =>
    d.name !== 'gemini'
      ? d
      : {
          ...d,
          read: (request) => {
            const view = d.read(request);
            views.push(view);
            return view;
          },
        },
  );
  const endpoint = new ModelEndpoint({ dialects });
  const url = await endpoint.start();
  const sandbox = await makeSandbox(options.owner);
  const wiring = wireGemini({ url, configDir: sandbox.home });
  await writeWiringFiles(wiring.files, options.owner);
  // writeWiringFiles creates `.gemini/` as root; gemini keeps its sessions there, so it must be the user's.
  if (options.owner !== undefined)
    await chown(join(sandbox.home, '.gemini'), options.owner.uid, options.owner.gid);
  const runner = new CliAgentRunner({
    backend: geminiBackend,
    command: options.command ?? bin ?? 'gemini',
    env: isolatedEnv(sandbox.home),
    // gemini writes a report file per API error into the temp folder: keep them inside the sandbox.
    extraEnv: { ...wiring.env, TMPDIR: sandbox.home },
    graceMs: 2000,
    ...(options.owner !== undefined && { runAs: options.owner }),
  });
  const run = (prompt: string, extra: Partial<AgentRunInput> = {}): Promise<AgentRunResult> =>
    runner.run({ prompt, cwd: sandbox.cwd, timeoutMs: 60_000, ...extra });
  return {
    endpoint,
    views,
    sandbox,
    run,
    /** The views of the agent's own requests (those offering tools), not gemini's side requests. */
    mainViews: () => views.filter((v) => v.tools.length > 0),
    /** The usage the endpoint reported for the answers gemini got (errors are not counted by gemini). */
    endpointUsage: () => {
      const ok = endpoint.requests().filter((r) => r.status === 200 && r.usage !== undefined);
      return {
        inputTokens: ok.reduce((n, r) => n + (r.usage?.inputTokens ?? 0), 0),
        outputTokens: ok.reduce((n, r) => n + (r.usage?.outputTokens ?? 0), 0),
        costUsd: 0,
      };
    },
    async [Symbol.asyncDispose]() {
      await endpoint.close();
      await sandbox[Symbol.asyncDispose]();
    },
  };
}

/** Resolves once no process of the group `pid` led is left (the whole tree was stopped). */
async function groupGone(pid: number, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      process.kill(-pid, 0);
    } catch {
      return true;
    }
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function startedPid(events: readonly AgentRunEvent[]): number {
  const started = events.find((e) => e.type === 'started');
  return started?.type === 'started' ? (started.pid ?? -1) : -1;
}

/** A copy of the installed CLI that `owner` can read, when the cache sits in a folder it cannot enter. */
async function cliFor(owner: Owner): Promise<{ command: string; dispose: () => Promise<void> }> {
  const path = bin ?? 'gemini';
  const probe = spawnSync('test', ['-x', path], { uid: owner.uid, gid: owner.gid });
  if (probe.status === 0) return { command: path, dispose: async () => undefined };
  // …/gemini-<version>/node_modules/.bin/gemini: copy the whole install folder (about 100 MB, well under a second).
  const install = dirname(dirname(dirname(path)));
  const root = await mkdtemp(join(tmpdir(), 'musubi-gemini-cli-'));
  await cp(install, join(root, 'cli'), { recursive: true, verbatimSymlinks: true });
  spawnSync('chmod', ['-R', 'a+rX', root]);
  return {
    command: join(root, 'cli', 'node_modules', '.bin', 'gemini'),
    dispose: () => rm(root, { recursive: true, force: true }),
  };
}

describe.runIf(bin !== undefined).concurrent('real gemini 0.61 against the model endpoint', () => {
  it(
    'replies with the scripted text and reports its session and this turn usage',
    { timeout: 60_000 },
    async () => {
      await using g = await geminiSetup();
      const result = await g.run('MUSUBI-MODEL: {"reply":"hello from the endpoint"}', {
        model: 'gemini-2.5-pro',
      });
      expect(result).toMatchObject({ isError: false, exitCode: 0, text: 'hello from the endpoint' });
      expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(result.usage).toEqual(g.endpointUsage());
      expect(g.mainViews().map((v) => v.model)).toEqual(['gemini-2.5-pro']);
      expect(g.mainViews()[0]?.stream).toBe(true);
    },
  );

  it(
    'resumes the session: the second turn sends the first and reports its own usage only',
    { timeout: 90_000 },
    async () => {
      await using g = await geminiSetup();
      const first = await g.run('MUSUBI-MODEL: {"reply":"first answer"}\nremember the word kiwi');
      expect(first).toMatchObject({ isError: false, text: 'first answer' });
      g.endpoint.clearRequests();
      g.views.length = 0;
      const second = await g.run('MUSUBI-MODEL: {"reply":"second answer"}', {
        sessionId: first.sessionId ?? '',
      });
      expect(second).toMatchObject({ isError: false, text: 'second answer', sessionId: first.sessionId });
      const texts = g.mainViews().at(-1)?.userTexts ?? [];
      expect(texts).toEqual([
        'MUSUBI-MODEL: {"reply":"first answer"}\nremember the word kiwi',
        'MUSUBI-MODEL: {"reply":"second answer"}',
      ]);
      expect(second.usage).toEqual(g.endpointUsage());
    },
  );

  it(
    'passes quotes, newlines, tabs and non-ASCII text to the model exactly',
    { timeout: 60_000 },
    async () => {
      await using g = await geminiSetup();
      const prompt = `quotes "double" 'single' \`back\` $HOME \\n\nsecond line\n\ttabbed — ünïcödé 日本語 🎉`;
      const result = await g.run(prompt);
      expect(result.isError).toBe(false);
      const main = g.endpoint.requests().filter((r) => (r.tools?.length ?? 0) > 0);
      expect(main.map((r) => r.prompt)).toEqual([prompt]);
    },
  );

  it('passes a 200 KB prompt to the model exactly', { timeout: 60_000 }, async () => {
    await using g = await geminiSetup();
    const prompt = `start of a long prompt\n${'0123456789abcdef'.repeat(200 * 64)}\nend`;
    const result = await g.run(prompt);
    expect(result.isError).toBe(false);
    const main = g.endpoint.requests().filter((r) => (r.tools?.length ?? 0) > 0);
    expect(main).toHaveLength(1);
    expect(main[0]?.prompt).toBe(prompt);
  });

  it(
    'writes a file in its working folder with write_file, then answers, reporting each step as it happens',
    { timeout: 60_000 },
    async () => {
      await using g = await geminiSetup();
      const events: AgentRunEvent[] = [];
      const result = await g.run(
        'MUSUBI-MODEL: {"write":{"path":"notes/a.txt","content":"hi from gemini\\n","then":"wrote it"}}',
        { onEvent: (e) => events.push(e) },
      );
      const path = join(g.sandbox.cwd, 'notes', 'a.txt');
      const tool = events.find((e) => e.type === 'tool');
      expect(tool).toMatchObject({ name: 'write_file', kind: 'edit', summary: path });
      const progress = events.filter((e) => e.type !== 'started' && e.type !== 'line');
      expect(progress).toEqual([
        { type: 'session', sessionId: result.sessionId },
        tool,
        { type: 'tool_result', callId: tool?.type === 'tool' ? tool.callId : '', isError: false, output: '' },
        { type: 'message', text: 'wrote it' },
        { type: 'usage', usage: g.endpointUsage() },
      ]);
      expect(result).toMatchObject({ isError: false, text: 'wrote it' });
      expect(await readFile(path, 'utf8')).toBe('hi from gemini\n');
      const answers = g.endpoint.requests().filter((r) => (r.tools?.length ?? 0) > 0);
      expect(answers.map((r) => [r.answer, r.toolResultsSinceUser])).toEqual([
        ['tool write_file', 0],
        ['text', 1],
      ]);
      expect(result.usage).toEqual(g.endpointUsage());
    },
  );

  it('fails with the API message of a 400', { timeout: 60_000 }, async () => {
    await using g = await geminiSetup();
    const events: AgentRunEvent[] = [];
    const result = await g.run(
      'MUSUBI-MODEL: {"error":{"status":400,"message":"Request contains an invalid argument."}}',
      { onEvent: (e) => events.push(e) },
    );
    expect(events.filter((e) => e.type === 'error')).toEqual([
      { type: 'error', message: 'Request contains an invalid argument. (400 INVALID_ARGUMENT)' },
    ]);
    expect(result).toMatchObject({ isError: true, exitCode: 144 });
    expect(result.errorMessage).toBe('Request contains an invalid argument. (400 INVALID_ARGUMENT)');
    expect(result.text).toBe(result.errorMessage);
    expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('fails with the API message of a 401', { timeout: 60_000 }, async () => {
    await using g = await geminiSetup();
    const result = await g.run('MUSUBI-MODEL: {"error":{"status":401,"message":"API key not valid."}}');
    expect(result).toMatchObject({ isError: true, exitCode: 145 });
    expect(result.errorMessage).toBe('API key not valid. (401 UNAUTHENTICATED)');
  });

  it(
    'fails an unauthenticated run with the message gemini prints (exit 41)',
    { timeout: 60_000 },
    async () => {
      await using sandbox = await makeSandbox();
      const runner = new CliAgentRunner({
        backend: geminiBackend,
        command: bin ?? 'gemini',
        env: isolatedEnv(sandbox.home),
        graceMs: 2000,
      });
      const result = await runner.run({ prompt: 'hello', cwd: sandbox.cwd, timeoutMs: 60_000 });
      expect(result).toMatchObject({ isError: true, exitCode: 41 });
      expect(result.errorMessage).toBe(
        `Please set an Auth method in your ${sandbox.home}/.gemini/settings.json or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA`,
      );
      expect(result.text).toBe(result.errorMessage);
    },
  );

  it('retries a 503 after its backoff and succeeds', { timeout: 60_000 }, async () => {
    await using g = await geminiSetup();
    const result = await g.run('MUSUBI-MODEL: {"flaky":{"then":{"reply":"after the retry"}}}');
    expect(result).toMatchObject({ isError: false, text: 'after the retry' });
    const main = g.endpoint.requests().filter((r) => (r.tools?.length ?? 0) > 0);
    expect(main.map((r) => r.status)).toEqual([503, 200]);
    expect(result.usage).toEqual(g.endpointUsage());
  });

  // gemini 0.61 retries a stream reset by the peer (ECONNRESET), but a stream the server closes early
  // (FIN, as the endpoint's cut does) fails as undici's `terminated`, which it does not count as retryable.
  it(
    'fails a turn whose stream was cut: gemini 0.61 does not retry a closed stream',
    { timeout: 60_000 },
    async () => {
      await using g = await geminiSetup();
      const result = await g.run('MUSUBI-MODEL: {"cut":{"then":{"reply":"after the cut"}}}');
      // -o json answers a failed turn with its error, not with the text that came before the cut.
      expect(result).toMatchObject({
        isError: true,
        exitCode: 1,
        errorMessage: 'terminated',
        text: 'terminated',
      });
      const main = g.endpoint.requests().filter((r) => (r.tools?.length ?? 0) > 0);
      expect(main.map((r) => r.isCut === true)).toEqual([true]);
    },
  );

  it('stops the whole process tree on a timeout', { timeout: 60_000 }, async () => {
    await using g = await geminiSetup();
    const events: AgentRunEvent[] = [];
    // Long enough for gemini to start and reach the hanging request while the other tests load the machine.
    const result = await g.run('MUSUBI-MODEL: "hang"', { timeoutMs: 20_000, onEvent: (e) => events.push(e) });
    expect(result).toMatchObject({ isError: true, timedOut: true });
    expect(g.endpoint.requests().some((r) => r.answer === 'hang')).toBe(true);
    expect(await groupGone(startedPid(events))).toBe(true);
  });

  it('stops the whole process tree when the turn is cancelled', { timeout: 60_000 }, async () => {
    await using g = await geminiSetup();
    const events: AgentRunEvent[] = [];
    const controller = new AbortController();
    const turn = g.run('MUSUBI-MODEL: "hang"', { signal: controller.signal, onEvent: (e) => events.push(e) });
    while (!g.endpoint.requests().some((r) => r.answer === 'hang'))
      await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    const result = await turn;
    expect(result).toMatchObject({ isError: true, canceled: true });
    expect(await groupGone(startedPid(events))).toBe(true);
  });

  it(
    'runs a turn as an unprivileged user (nobody) that writes a file it owns',
    { timeout: 60_000 },
    async (ctx) => {
      if (!isRoot) {
        console.warn('SKIP gemini as nobody: the test process is not root, so it cannot switch users');
        ctx.skip();
      }
      const cli = await cliFor(NOBODY);
      try {
        await using g = await geminiSetup({ owner: NOBODY, command: cli.command });
        const result = await g.run('MUSUBI-MODEL: {"write":{"path":"mine.txt","content":"by nobody\\n"}}');
        expect(result).toMatchObject({ isError: false, text: 'Done.' });
        expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
        const file = join(g.sandbox.cwd, 'mine.txt');
        expect(await readFile(file, 'utf8')).toBe('by nobody\n');
        const owner = spawnSync('stat', ['-c', '%u', file], { encoding: 'utf8' }).stdout.trim();
        expect(owner).toBe(String(NOBODY.uid));
      } finally {
        await cli.dispose();
      }
    },
  );
});
