import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentRunEvent, AgentRunInput, AgentRunResult } from '../../src/agents/agent-runner.js';
import { claudeBackend } from '../../src/agents/claude/claude-backend.js';
import { wireClaude } from '../../src/agents/claude/claude-wiring.js';
import { CliAgentRunner } from '../../src/agents/cli/cli-agent-runner.js';
import type { CliSettings } from '../../src/agents/cli/cli-backend.js';
import type { ConversationView } from '../../src/agents/model-endpoint/conversation.js';
import { ModelEndpoint } from '../../src/agents/model-endpoint/model-endpoint.js';
import type { LoggedRequest } from '../../src/agents/model-endpoint/request-log.js';
import { expectNoLiveChildren } from '../fixtures/process-children.js';
import {
  binaryFor,
  directive,
  endpointUsage,
  isAlive,
  isolatedEnv,
  makeSandbox,
  nobody,
  type Owner,
  PINS,
  realCliGuard,
  recordingDialects,
  untilHanging,
  writeWiringFiles,
} from './real-cli.js';

const bin = realCliGuard('claude');
const TURN_MS = 60_000;
const TEST_MS = 90_000;
const isRoot = process.getuid?.() === 0;

interface Rig extends AsyncDisposable {
  readonly endpoint: ModelEndpoint;
  readonly cwd: string;
  readonly views: ConversationView[];
  run(input: Omit<AgentRunInput, 'cwd' | 'timeoutMs'> & { timeoutMs?: number }): Promise<Run>;
}

interface Run {
  readonly result: AgentRunResult;
  readonly argv: readonly string[];
  readonly pid: number | null;
  /** The endpoint's log of this run's requests only. */
  readonly requests: readonly LoggedRequest[];
}

/**
 * One endpoint and one sandbox per test, so tests run concurrently and each sees only its own
 * requests. `owner` runs claude as that user (the sandbox, config folder and binary made reachable).
 */
async function rig(
  options: { owner?: Owner; extraEnv?: Record<string, string>; settings?: CliSettings } = {},
): Promise<Rig> {
  const views: ConversationView[] = [];
  const endpoint = new ModelEndpoint({ dialects: recordingDialects(views) });
  const url = await endpoint.start();
  const sandbox = await makeSandbox(options.owner);
  const configDir = join(sandbox.home, '.claude');
  const wiring = wireClaude({ url, configDir });
  await writeWiringFiles(wiring.files, options.owner);
  const binary = await binaryFor(options.owner, bin ?? 'claude');
  const command = binary.path;
  const env = isolatedEnv(sandbox.home);
  if (options.owner !== undefined) env['USER'] = 'nobody';
  const runner = new CliAgentRunner({
    backend: claudeBackend,
    command,
    env,
    extraEnv: { ...wiring.env, ...options.extraEnv },
    ...(options.settings !== undefined && { settings: options.settings }),
    ...(options.owner !== undefined && { runAs: options.owner }),
  });
  return {
    endpoint,
    cwd: sandbox.cwd,
    views,
    run: async (input) => {
      const before = endpoint.requests().length;
      let argv: readonly string[] = [];
      let pid: number | null = null;
      const result = await runner.run({
        timeoutMs: TURN_MS,
        ...input,
        cwd: sandbox.cwd,
        onEvent: (e: AgentRunEvent) => {
          if (e.type === 'started') ({ argv, pid } = e);
          input.onEvent?.(e);
        },
      });
      return { result, argv, pid, requests: endpoint.requests().slice(before) };
    },
    [Symbol.asyncDispose]: async () => {
      await endpoint.close();
      await sandbox[Symbol.asyncDispose]();
      await binary[Symbol.asyncDispose]();
    },
  };
}

describe.skipIf(bin === undefined).concurrent(`real claude ${PINS.claude.version}`, () => {
  it(
    'replies with the endpoint text and reports the session id and this turn usage',
    { timeout: TEST_MS },
    async () => {
      await using r = await rig();
      const { result, requests } = await r.run({ prompt: directive({ reply: 'Hello from the endpoint.' }) });
      expect(result).toMatchObject({ text: 'Hello from the endpoint.', isError: false, exitCode: 0 });
      expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(requests.map((q) => [q.dialect, q.path, q.stream])).toEqual([
        ['anthropic', '/v1/messages?beta=true', true],
      ]);
      expect(result.usage).toMatchObject(endpointUsage(requests));
      expect(result.usage?.costUsd).toBeGreaterThan(0);
    },
  );

  it(
    'resumes the session with the earlier turn in the request and reports only the new turn usage',
    { timeout: TEST_MS },
    async () => {
      await using r = await rig();
      const first = await r.run({ prompt: directive({ reply: 'first answer' }) });
      expect(first.result.text).toBe('first answer');
      const sessionId = first.result.sessionId ?? '';
      const second = await r.run({
        prompt: `second turn\n${directive({ reply: 'second answer' })}`,
        sessionId,
      });
      expect(second.result).toMatchObject({ text: 'second answer', isError: false, sessionId });
      expect(second.argv).toEqual(expect.arrayContaining(['--resume', sessionId]));
      expect(r.views.at(-1)?.userTexts).toEqual([
        directive({ reply: 'first answer' }),
        `second turn\n${directive({ reply: 'second answer' })}`,
      ]);
      expect(second.result.usage).toMatchObject(endpointUsage(second.requests));
      expect(second.result.usage?.inputTokens).toBeLessThan(
        endpointUsage(first.requests).inputTokens + endpointUsage(second.requests).inputTokens,
      );
    },
  );

  it(
    'gets an answer to its title side request and still runs the turn when non-essential traffic is on',
    { timeout: TEST_MS },
    async () => {
      // An empty value switches the wiring's CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC off again.
      await using r = await rig({ extraEnv: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '' } });
      const { result, requests } = await r.run({ prompt: directive({ reply: 'main answer' }) });
      expect(result).toMatchObject({ text: 'main answer', isError: false });
      const side = requests.filter((q) => q.tools?.length === 0);
      expect(side.map((q) => [q.answer, q.status])).toEqual([['text', 200]]);
      expect(side[0]?.prompt).toContain('<session>');
      // The side request is part of this turn's usage, as the endpoint counted it.
      expect(result.usage).toMatchObject(endpointUsage(requests));
    },
  );

  it(
    'delivers the exact prompt with quotes, tabs, newlines and non-ASCII text',
    { timeout: TEST_MS },
    async () => {
      await using r = await rig();
      const prompt = `  Say "hi" — it's 'ok'\n\tline two: ünïcødé 日本語 🎉 $HOME \`x\` \\n\n\n${directive('echo')}\n`;
      const { result, requests } = await r.run({ prompt });
      expect(requests[0]?.prompt).toBe(prompt);
      expect(result.text).toBe(prompt);
    },
  );

  it('delivers a 200 KB prompt whole', { timeout: TEST_MS }, async () => {
    await using r = await rig();
    const lines = Array.from(
      { length: 3000 },
      (_, i) => `line ${i}: the quick brown fox — ü 日本 ${'z'.repeat(40)}`,
    );
    const prompt = `${lines.join('\n')}\n${directive({ reply: 'big ok' })}`;
    expect(prompt.length).toBeGreaterThan(200 * 1024);
    const { result, requests } = await r.run({ prompt });
    expect(result).toMatchObject({ text: 'big ok', isError: false });
    expect(requests[0]?.prompt).toBe(prompt);
  });

  it('writes a file in cwd through its Write tool', { timeout: TEST_MS }, async () => {
    await using r = await rig();
    const prompt = directive({
      write: { path: 'hello.txt', content: 'hello from claude\n', then: 'wrote it' },
    });
    const events: AgentRunEvent[] = [];
    const { result, requests } = await r.run({ prompt, onEvent: (e) => events.push(e) });
    // The transcript: the Write call as an edit of hello.txt, its result, and the usage.
    expect(events.filter((e) => e.type === 'tool')).toEqual([
      expect.objectContaining({ name: 'Write', kind: 'edit', summary: expect.stringContaining('hello.txt') }),
    ]);
    expect(events.filter((e) => e.type === 'tool_result')).toEqual([
      expect.objectContaining({ isError: false }),
    ]);
    expect(events.some((e) => e.type === 'usage')).toBe(true);
    expect(result).toMatchObject({ text: 'wrote it', isError: false });
    expect(requests.map((q) => [q.answer, q.toolResultsSinceUser])).toEqual([
      ['tool Write', 0],
      ['text', 1],
    ]);
    expect(await readFile(join(r.cwd, 'hello.txt'), 'utf8')).toBe('hello from claude\n');
    expect(result.usage).toMatchObject(endpointUsage(requests));
  });

  it(
    'overwrites an existing file after reading it (its Write refuses a file not read yet)',
    { timeout: TEST_MS },
    async () => {
      await using r = await rig();
      await writeFile(join(r.cwd, 'old.txt'), 'old\n');
      const prompt = directive({ write: { path: 'old.txt', content: 'edited\n', then: 'edited it' } });
      const events: AgentRunEvent[] = [];
      const { result, requests } = await r.run({ prompt, onEvent: (e) => events.push(e) });
      expect(requests.map((q) => q.answer)).toEqual(['tool Read', 'tool Write', 'text']);
      expect(events.filter((e) => e.type === 'tool_result')).toEqual([
        expect.objectContaining({ isError: false }),
        expect.objectContaining({ isError: false }),
      ]);
      expect(result).toMatchObject({ text: 'edited it', isError: false });
      expect(await readFile(join(r.cwd, 'old.txt'), 'utf8')).toBe('edited\n');
    },
  );

  it('fails with the API error message when the endpoint answers 400', { timeout: TEST_MS }, async () => {
    await using r = await rig();
    const { result } = await r.run({
      prompt: directive({ error: { status: 400, message: 'bad thing from the endpoint' } }),
    });
    expect(result).toMatchObject({
      isError: true,
      exitCode: 1,
      errorMessage: 'API Error: 400 bad thing from the endpoint',
    });
  });

  it(
    'fails with its own invalid-key message on 401 (it retries 401 like a 5xx)',
    { timeout: TEST_MS },
    async () => {
      // claude retries a 401 up to 10 times with backoff; CLAUDE_CODE_MAX_RETRIES=0 makes it give up at once.
      await using r = await rig({ extraEnv: { CLAUDE_CODE_MAX_RETRIES: '0' } });
      const { result, requests } = await r.run({
        prompt: directive({ error: { status: 401, message: 'invalid x-api-key' } }),
      });
      expect(requests.map((q) => q.status)).toEqual([401]);
      expect(result).toMatchObject({
        isError: true,
        exitCode: 1,
        errorMessage: 'Invalid API key · Fix external API key',
      });
    },
  );

  it('retries a 503 and succeeds', { timeout: TEST_MS }, async () => {
    await using r = await rig();
    const { result, requests } = await r.run({
      prompt: directive({ flaky: { then: { reply: 'after the flake' } } }),
    });
    expect(result).toMatchObject({ text: 'after the flake', isError: false });
    expect(requests.map((q) => q.status)).toEqual([503, 200]);
    expect(result.usage).toMatchObject(endpointUsage(requests));
  });

  it('retries a cut stream without streaming and succeeds', { timeout: TEST_MS }, async () => {
    await using r = await rig();
    const { result, requests } = await r.run({
      prompt: directive({ cut: { then: { reply: 'after the cut' } } }),
    });
    expect(result).toMatchObject({ text: 'after the cut', isError: false });
    expect(requests.map((q) => [q.stream, q.isCut ?? false])).toEqual([
      [true, true],
      [false, false],
    ]);
    // Its result `usage` misses the non-streamed answer (all zeros); the parser reads modelUsage.
    expect(result.usage).toMatchObject(endpointUsage(requests));
  });

  if (!isRoot)
    console.warn('SKIP real claude as root (acceptEdits and IS_SANDBOX cases): this process is not root');
  it.runIf(isRoot)(
    'runs as root with acceptEdits by default: edits work, shell commands are refused',
    { timeout: TEST_MS },
    async () => {
      await using r = await rig();
      const write = await r.run({
        prompt: directive({ write: { path: 'root.txt', content: 'as root\n', then: 'ok' } }),
      });
      expect(write.argv).toEqual(expect.arrayContaining(['--permission-mode', 'acceptEdits']));
      expect(write.argv).not.toContain('--dangerously-skip-permissions');
      expect(await readFile(join(r.cwd, 'root.txt'), 'utf8')).toBe('as root\n');
      const shell = await r.run({
        prompt: directive({ run: { command: ['sh', '-c', 'echo ran > ran.txt'], then: 'tried' } }),
      });
      expect(shell.result).toMatchObject({ text: 'tried', isError: false });
      expect(shell.requests.map((q) => q.answer)).toEqual(['tool Bash', 'text']);
      await expect(stat(join(r.cwd, 'ran.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    },
  );

  it.runIf(isRoot)(
    'runs as root with --dangerously-skip-permissions when IS_SANDBOX=1',
    { timeout: TEST_MS },
    async () => {
      await using r = await rig({ extraEnv: { IS_SANDBOX: '1' } });
      const { result, argv } = await r.run({
        prompt: directive({ run: { command: ['sh', '-c', 'echo ran > ran.txt'], then: 'ran' } }),
      });
      expect(argv).toContain('--dangerously-skip-permissions');
      expect(result).toMatchObject({ text: 'ran', isError: false });
      expect(await readFile(join(r.cwd, 'ran.txt'), 'utf8')).toBe('ran\n');
    },
  );

  const owner = isRoot ? nobody() : undefined;
  if (owner === undefined)
    console.warn('SKIP real claude as an unprivileged user: needs root and a `nobody` user');
  it.runIf(owner !== undefined)(
    'runs as an unprivileged user with --dangerously-skip-permissions',
    { timeout: TEST_MS },
    async () => {
      const user = owner ?? { uid: 0, gid: 0 };
      await using r = await rig({ owner: user });
      const prompt = directive({
        run: { command: ['sh', '-c', 'id -u > uid.txt'], then: 'ran unprivileged' },
      });
      const { result, argv } = await r.run({ prompt });
      expect(argv).toContain('--dangerously-skip-permissions');
      expect(result).toMatchObject({ text: 'ran unprivileged', isError: false });
      expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect((await readFile(join(r.cwd, 'uid.txt'), 'utf8')).trim()).toBe(String(user.uid));
    },
  );
});

// Not concurrent: the no-live-children check sees every child of this test process.
describe.skipIf(bin === undefined)(`real claude ${PINS.claude.version}: stopping`, () => {
  it('stops the whole process tree at the timeout', { timeout: TEST_MS }, async () => {
    await using r = await rig();
    const { result, pid, requests } = await r.run({ prompt: directive('hang'), timeoutMs: 5_000 });
    expect(result).toMatchObject({ timedOut: true, isError: true });
    expect(requests.map((q) => q.answer)).toContain('hang');
    expect(isAlive(pid)).toBe(false);
    await expectNoLiveChildren();
  });

  it('stops the whole process tree when the signal aborts', { timeout: TEST_MS }, async () => {
    await using r = await rig();
    const controller = new AbortController();
    const running = r.run({ prompt: directive('hang'), signal: controller.signal });
    await untilHanging(r.endpoint, TURN_MS);
    controller.abort();
    const { result, pid } = await running;
    expect(result).toMatchObject({ canceled: true, isError: true });
    expect(isAlive(pid)).toBe(false);
    await expectNoLiveChildren();
  });
});
