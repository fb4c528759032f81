import { execFileSync } from 'node:child_process';
import { chown, mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentRunEvent, AgentRunInput, AgentRunResult } from '../../src/agents/agent-runner.js';
import { CliAgentRunner } from '../../src/agents/cli/cli-agent-runner.js';
import type { CliSettings } from '../../src/agents/cli/cli-backend.js';
import { codexBackend } from '../../src/agents/codex/codex-backend.js';
import { wireCodex } from '../../src/agents/codex/codex-wiring.js';
import type { ConversationView } from '../../src/agents/model-endpoint/conversation.js';
import { ModelEndpoint } from '../../src/agents/model-endpoint/model-endpoint.js';
import type { LoggedRequest } from '../../src/agents/model-endpoint/request-log.js';
import { expectNoLiveChildren } from '../fixtures/process-children.js';
import {
  agentClisDir,
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

const bin = realCliGuard('codex');
const TURN_MS = 60_000;
const TEST_MS = 90_000;
const isRoot = process.getuid?.() === 0;

interface RunOptions extends Omit<AgentRunInput, 'cwd' | 'timeoutMs'> {
  readonly timeoutMs?: number;
  /** Run with a new runner (no session memory of earlier turns), as after a restart of musubi. */
  readonly isFreshRunner?: boolean;
}

interface Rig extends AsyncDisposable {
  readonly endpoint: ModelEndpoint;
  readonly cwd: string;
  readonly codexHome: string;
  readonly views: ConversationView[];
  run(input: RunOptions): Promise<Run>;
}

interface Run {
  readonly result: AgentRunResult;
  readonly argv: readonly string[];
  readonly pid: number | null;
  /** The endpoint's log of this run's requests only. */
  readonly requests: readonly LoggedRequest[];
}

/**
 * One endpoint and one sandbox per test, so tests run concurrently and each sees only its own requests.
 * `owner` runs codex as that user: the sandbox and CODEX_HOME are chowned to it, and the install is
 * hard-linked into the sandbox (the cache under /root is not reachable for another user).
 */
async function rig(
  options: {
    owner?: Owner;
    settings?: CliSettings;
    /** No wiring files: codex's built-in OpenAI provider, pointed at the endpoint by OPENAI_BASE_URL. */
    isBuiltInProvider?: boolean;
  } = {},
): Promise<Rig> {
  const views: ConversationView[] = [];
  const endpoint = new ModelEndpoint({ dialects: recordingDialects(views) });
  const url = await endpoint.start();
  const sandbox = await makeSandbox(options.owner);
  const wiring = wireCodex({ url, configDir: join(sandbox.home, '.config') });
  const codexHome = wiring.env['CODEX_HOME'] ?? '';
  const isWired = options.isBuiltInProvider !== true;
  if (isWired) await writeWiringFiles(wiring.files, options.owner);
  else await mkdir(codexHome, { recursive: true });
  let command = bin ?? 'codex';
  const env = isolatedEnv(sandbox.home);
  if (options.owner !== undefined) {
    // writeWiringFiles creates CODEX_HOME as root; codex writes its sessions and databases there.
    await chown(dirname(codexHome), options.owner.uid, options.owner.gid);
    await chown(codexHome, options.owner.uid, options.owner.gid);
    const install = join(dirname(sandbox.home), 'codex-install');
    execFileSync('cp', ['-al', join(agentClisDir(), `codex-${PINS.codex.version}`), install]);
    command = join(install, 'node_modules', '.bin', 'codex');
    env['USER'] = 'nobody';
  }
  const runnerOptions = {
    backend: codexBackend,
    command,
    env,
    extraEnv: isWired
      ? wiring.env
      : { CODEX_HOME: codexHome, OPENAI_BASE_URL: `${url}/v1`, CODEX_API_KEY: 'musubi-local' },
    ...(options.settings !== undefined && { settings: options.settings }),
    ...(options.owner !== undefined && { runAs: options.owner }),
  };
  const runner = new CliAgentRunner(runnerOptions);
  return {
    endpoint,
    cwd: sandbox.cwd,
    codexHome,
    views,
    run: async ({ isFreshRunner, ...input }) => {
      const before = endpoint.requests().length;
      let argv: readonly string[] = [];
      let pid: number | null = null;
      const result = await (isFreshRunner === true ? new CliAgentRunner(runnerOptions) : runner).run({
        timeoutMs: TURN_MS,
        ...(wiring.model !== undefined && { model: wiring.model }),
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
    },
  };
}

/** The file's text; when it is missing, the failure names what codex answered the tool call with. */
async function fileWritten(r: Rig, name: string): Promise<string> {
  try {
    return await readFile(join(r.cwd, name), 'utf8');
  } catch {
    throw new Error(
      `${name} was not written; the last tool result was: ${r.views.at(-1)?.lastToolOutput ?? '(none)'}`,
    );
  }
}

describe.skipIf(bin === undefined).concurrent(`real codex ${PINS.codex.version}`, () => {
  it(
    'replies with the endpoint text and reports the session id and this turn usage',
    { timeout: TEST_MS },
    async () => {
      await using r = await rig();
      const { result, requests, argv } = await r.run({
        prompt: directive({ reply: 'Hello from the endpoint.' }),
      });
      expect(result).toMatchObject({ text: 'Hello from the endpoint.', isError: false, exitCode: 0 });
      expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      expect(argv).toEqual(expect.arrayContaining(['-s', 'workspace-write', '-m', 'gpt-5.5']));
      expect(requests.map((q) => [q.dialect, q.path, q.stream, q.model])).toEqual([
        ['openai-responses', '/v1/responses', true, 'gpt-5.5'],
      ]);
      expect(result.usage).toEqual({ ...endpointUsage(requests), costUsd: 0 });
      // The working directory comes from codex's <environment_context>.
      expect(r.views[0]?.cwd).toBe(r.cwd);
    },
  );

  it(
    'resumes the session with the earlier turn in the request and reports only the new turn usage',
    { timeout: TEST_MS },
    async () => {
      await using r = await rig();
      const first = await r.run({ prompt: directive({ reply: 'first answer' }) });
      const sessionId = first.result.sessionId ?? '';
      const second = await r.run({
        prompt: `second turn\n${directive({ reply: 'second answer' })}`,
        sessionId,
      });
      expect(second.result).toMatchObject({ text: 'second answer', isError: false, sessionId });
      expect(second.argv).toEqual(expect.arrayContaining(['resume', sessionId]));
      const userTexts = r.views.at(-1)?.userTexts ?? [];
      expect(userTexts.slice(-2)).toEqual([
        directive({ reply: 'first answer' }),
        `second turn\n${directive({ reply: 'second answer' })}`,
      ]);
      expect(second.result.usage).toEqual({ ...endpointUsage(second.requests), costUsd: 0 });
      // A runner that never saw the session (musubi restarted) reads the earlier total from the rollout.
      const third = await r.run({
        prompt: `third turn\n${directive({ reply: 'third' })}`,
        sessionId,
        isFreshRunner: true,
      });
      expect(third.result).toMatchObject({ text: 'third', isError: false, sessionId });
      expect(third.result.usage).toEqual({ ...endpointUsage(third.requests), costUsd: 0 });
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

  it('writes a file in cwd through its free-form apply_patch tool', { timeout: TEST_MS }, async () => {
    await using r = await rig();
    const prompt = directive({
      write: { path: 'hello.txt', content: 'hello from codex\n', then: 'wrote it' },
    });
    const events: AgentRunEvent[] = [];
    const { result, requests } = await r.run({ prompt, onEvent: (e) => events.push(e) });
    // The transcript: the patch as an edit of hello.txt and its result.
    expect(events.filter((e) => e.type === 'tool')).toEqual([
      expect.objectContaining({ kind: 'edit', summary: expect.stringContaining('hello.txt') }),
    ]);
    expect(events.filter((e) => e.type === 'tool_result')).toEqual([
      expect.objectContaining({ isError: false }),
    ]);
    expect(result).toMatchObject({ text: 'wrote it', isError: false });
    expect(requests.map((q) => [q.answer, q.toolResultsSinceUser])).toEqual([
      ['tool apply_patch', 0],
      ['text', 1],
    ]);
    expect(await fileWritten(r, 'hello.txt')).toBe('hello from codex\n');
    expect(result.usage).toEqual({ ...endpointUsage(requests), costUsd: 0 });
  });

  it('runs a shell command through exec_command', { timeout: TEST_MS }, async () => {
    await using r = await rig();
    const prompt = directive({ run: { command: ['sh', '-c', 'echo ran > ran.txt'], then: 'ran it' } });
    const { result, requests } = await r.run({ prompt });
    expect(result).toMatchObject({ text: 'ran it', isError: false });
    expect(requests.map((q) => q.answer)).toEqual(['tool exec_command', 'text']);
    expect(await fileWritten(r, 'ran.txt')).toBe('ran\n');
  });

  it(
    'writes a file and runs a command with the default model gpt-6.2-sol through its code-mode exec tool',
    { timeout: TEST_MS },
    async () => {
      await using r = await rig();
      const write = directive({
        write: { path: 'cm.txt', content: 'code mode\n', then: 'wrote in code mode' },
      });
      const first = await r.run({ prompt: write, model: 'gpt-6.2-sol' });
      expect(first.result).toMatchObject({ text: 'wrote in code mode', isError: false });
      expect(first.requests.map((q) => [q.model, q.answer, q.toolResultsSinceUser])).toEqual([
        ['gpt-6.2-sol', 'tool apply_patch', 0],
        ['gpt-6.2-sol', 'text', 1],
      ]);
      expect(await fileWritten(r, 'cm.txt')).toBe('code mode\n');
      const run = directive({
        run: { command: ['sh', '-c', 'echo ran > cm-ran.txt'], then: 'ran in code mode' },
      });
      const second = await r.run({ prompt: run, model: 'gpt-6.2-sol' });
      expect(second.result).toMatchObject({ text: 'ran in code mode', isError: false });
      expect(await fileWritten(r, 'cm-ran.txt')).toBe('ran\n');
    },
  );

  it(
    'accepts permissionMode auto (--approve-for-me, no -s) and writes in cwd',
    { timeout: TEST_MS },
    async () => {
      await using r = await rig({ settings: { permissionMode: 'auto' } });
      const prompt = directive({ write: { path: 'auto.txt', content: 'auto\n', then: 'auto ok' } });
      const { result, argv } = await r.run({ prompt });
      expect(argv).toContain('--approve-for-me');
      expect(argv).not.toContain('-s');
      expect(result).toMatchObject({ text: 'auto ok', isError: false, exitCode: 0 });
      expect(await fileWritten(r, 'auto.txt')).toBe('auto\n');
    },
  );

  it('fails with the API error message when the endpoint answers 400', { timeout: TEST_MS }, async () => {
    await using r = await rig();
    const { result, requests } = await r.run({
      prompt: directive({ error: { status: 400, message: 'bad thing from the endpoint' } }),
    });
    expect(requests.map((q) => q.status)).toEqual([400]);
    expect(result).toMatchObject({ isError: true, exitCode: 1, errorMessage: 'bad thing from the endpoint' });
  });

  it('fails with the API message on 401 after its one retry', { timeout: TEST_MS }, async () => {
    await using r = await rig();
    const { result, requests } = await r.run({
      prompt: directive({ error: { status: 401, message: 'key is wrong' } }),
    });
    expect(requests.map((q) => q.status)).toEqual([401, 401]);
    expect(result).toMatchObject({ isError: true, exitCode: 1 });
    expect(result.errorMessage).toMatch(
      /^unexpected status 401 Unauthorized: key is wrong, url: http:\/\/127\.0\.0\.1:\d+\/v1\/responses$/,
    );
  });

  it('retries a 503 and succeeds', { timeout: TEST_MS }, async () => {
    await using r = await rig();
    const { result, requests } = await r.run({
      prompt: directive({ flaky: { then: { reply: 'after the flake' } } }),
    });
    expect(result).toMatchObject({ text: 'after the flake', isError: false });
    expect(requests.map((q) => q.status)).toEqual([503, 200]);
    expect(result.usage).toEqual({ ...endpointUsage(requests), costUsd: 0 });
  });

  it(
    'retries a cut stream and succeeds despite its reconnect error event',
    { timeout: TEST_MS },
    async () => {
      await using r = await rig();
      const { result, requests } = await r.run({
        prompt: directive({ cut: { then: { reply: 'after the cut' } } }),
      });
      expect(result).toMatchObject({ text: 'after the cut', isError: false });
      expect(result.errorMessage).toBeUndefined();
      expect(requests.map((q) => [q.stream, q.isCut ?? false])).toEqual([
        [true, true],
        [true, false],
      ]);
      expect(result.usage).toEqual({ ...endpointUsage(requests), costUsd: 0 });
    },
  );

  it(
    'reaches the endpoint through OPENAI_BASE_URL with the built-in provider and CODEX_API_KEY',
    { timeout: TEST_MS },
    async () => {
      // No wiring: the built-in OpenAI provider, pointed at the endpoint by `-c openai_base_url`. It tries
      // a websocket first; the endpoint refuses the upgrade with 426 and codex falls back to HTTP at once.
      await using r = await rig({ isBuiltInProvider: true });
      const { result, requests, argv } = await r.run({ prompt: directive({ reply: 'built-in provider' }) });
      expect(argv).toEqual(expect.arrayContaining(['-c', `openai_base_url="${r.endpoint.url}/v1"`]));
      expect(result).toMatchObject({ text: 'built-in provider', isError: false, exitCode: 0 });
      expect(requests.map((q) => [q.method, q.path, q.status, q.headers['authorization']])).toEqual([
        ['GET', '/v1/responses', 426, '[redacted]'],
        ['POST', '/v1/responses', 200, '[redacted]'],
      ]);
    },
  );

  if (!isRoot) console.warn('SKIP real codex as root: this process is not root');
  it.runIf(isRoot)('runs as root with the workspace-write sandbox', { timeout: TEST_MS }, async () => {
    await using r = await rig();
    const { result, argv } = await r.run({
      prompt: directive({ run: { command: ['sh', '-c', 'id -u > uid.txt'], then: 'ran as root' } }),
    });
    expect(argv).toEqual(expect.arrayContaining(['-s', 'workspace-write']));
    expect(result).toMatchObject({ text: 'ran as root', isError: false });
    expect((await readFile(join(r.cwd, 'uid.txt'), 'utf8')).trim()).toBe('0');
  });

  const owner = isRoot ? nobody() : undefined;
  if (owner === undefined)
    console.warn('SKIP real codex as an unprivileged user: needs root and a `nobody` user');
  it.runIf(owner !== undefined)('runs as an unprivileged user', { timeout: TEST_MS }, async () => {
    const user = owner ?? { uid: 0, gid: 0 };
    await using r = await rig({ owner: user });
    const prompt = directive({ run: { command: ['sh', '-c', 'id -u > uid.txt'], then: 'ran unprivileged' } });
    const { result } = await r.run({ prompt });
    expect(result).toMatchObject({ text: 'ran unprivileged', isError: false });
    expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect((await readFile(join(r.cwd, 'uid.txt'), 'utf8')).trim()).toBe(String(user.uid));
  });
});

// Not concurrent: the no-live-children check sees every child of this test process.
describe.skipIf(bin === undefined)(`real codex ${PINS.codex.version}: stopping`, () => {
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
