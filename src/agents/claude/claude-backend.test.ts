import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeParentEnv, makeTempDir, readRecord } from '../../../test/fakes/fake-cli-harness.js';
import type { AgentRunEvent } from '../agent-runner.js';
import { CliAgentRunner } from '../cli/cli-agent-runner.js';
import type { CliTurn } from '../cli/cli-backend.js';
import { claudeBackend, claudeRootNotice } from './claude-backend.js';

function turn(over: Partial<CliTurn> = {}): CliTurn {
  return {
    prompt: 'x',
    cwd: '/work',
    scratchDir: '/scratch',
    childEnv: {},
    isRoot: false,
    settings: {},
    ...over,
  };
}

function permissionArgs(t: CliTurn): string[] {
  const { args } = claudeBackend.buildInvocation(t);
  const at = args.indexOf('--permission-mode');
  return args.includes('--dangerously-skip-permissions')
    ? ['--dangerously-skip-permissions']
    : at === -1
      ? []
      : args.slice(at, at + 2);
}

describe('claude permission flags', () => {
  it('uses --permission-mode acceptEdits when root without IS_SANDBOX=1 (claude refuses the bypass flag as root)', () => {
    expect(permissionArgs(turn({ isRoot: true }))).toEqual(['--permission-mode', 'acceptEdits']);
    expect(permissionArgs(turn({ isRoot: true, childEnv: { IS_SANDBOX: 'true' } }))).toEqual([
      '--permission-mode',
      'acceptEdits',
    ]);
    expect(permissionArgs(turn({ isRoot: true, settings: { permissionMode: 'bypass' } }))).toEqual([
      '--permission-mode',
      'acceptEdits',
    ]);
  });

  it('keeps --dangerously-skip-permissions when root with IS_SANDBOX=1 or when not root', () => {
    expect(permissionArgs(turn({ isRoot: true, childEnv: { IS_SANDBOX: '1' } }))).toEqual([
      '--dangerously-skip-permissions',
    ]);
    expect(permissionArgs(turn({ isRoot: false }))).toEqual(['--dangerously-skip-permissions']);
  });

  it('passes an explicit permission mode through when root', () => {
    expect(permissionArgs(turn({ isRoot: true, settings: { permissionMode: 'plan' } }))).toEqual([
      '--permission-mode',
      'plan',
    ]);
  });

  it('gives a start-up notice only when root turns lose the bypass', () => {
    expect(claudeRootNotice(true, {}, undefined)).toContain('--permission-mode acceptEdits');
    expect(claudeRootNotice(true, {}, undefined)).toContain('IS_SANDBOX=1');
    expect(claudeRootNotice(true, {}, 'bypass')).toBeDefined();
    expect(claudeRootNotice(true, { IS_SANDBOX: '1' }, undefined)).toBeUndefined();
    expect(claudeRootNotice(false, {}, undefined)).toBeUndefined();
    expect(claudeRootNotice(true, {}, 'acceptEdits')).toBeUndefined();
  });
});

describe('claude backend', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
  afterEach(() => cleanup());

  // IS_SANDBOX=1 keeps the argv the same whether the tests run as root (CI) or not.
  const runner = (extraEnv: Record<string, string>, settings = {}, parent = {}): CliAgentRunner =>
    new CliAgentRunner({
      backend: claudeBackend,
      env: fakeParentEnv(parent),
      extraEnv: { IS_SANDBOX: '1', ...extraEnv },
      model: 'haiku',
      settings,
    });

  it('runs claude -p with stream-json, the prompt on stdin, and parses text, session and usage', async () => {
    const record = join(dir, 'record.json');
    const events: string[] = [];
    const result = await runner({ FAKE_AGENT_RECORD: record }).run({
      prompt: 'fix the bug\nplease',
      cwd: dir,
      timeoutMs: 10_000,
      systemPrompt: 'You are yadon-1.',
      onEvent: (e) => events.push(e.type),
    });
    const rec = await readRecord(record);
    expect(rec.argv).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--model',
      'haiku',
      '--append-system-prompt',
      'You are yadon-1.',
      '--dangerously-skip-permissions',
    ]);
    expect(rec.stdin).toBe('fix the bug\nplease');
    expect(rec.cwd).toBe(dir);
    expect(result).toMatchObject({
      backend: 'claude',
      text: 'echo: fix the bug',
      exitCode: 0,
      isError: false,
    });
    expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.usage).toEqual({ inputTokens: 18, outputTokens: 17, costUsd: 0.0123 });
    expect(events).toEqual(expect.arrayContaining(['started', 'line', 'session', 'message']));
  });

  it('reports the streamed usage while running and the final usage with its cost as the last event', async () => {
    const events: AgentRunEvent[] = [];
    const result = await runner({}).run({
      prompt: 'x',
      cwd: dir,
      timeoutMs: 10_000,
      onEvent: (e) => events.push(e),
    });
    const usages = events.filter((e) => e.type === 'usage');
    // The fake's assistant message says 1 output token (as claude's streamed message start does).
    expect(usages).toEqual([
      { type: 'usage', usage: { inputTokens: result.usage?.inputTokens, outputTokens: 1, costUsd: 0 } },
      { type: 'usage', usage: result.usage },
    ]);
    expect(events.at(-1)).toEqual({ type: 'usage', usage: result.usage });
    expect(result.usage?.costUsd).toBeGreaterThan(0);
  });

  it('passes the previous session id with --resume and the configured permission mode and max turns', async () => {
    const record = join(dir, 'record.json');
    const first = await runner({}).run({ prompt: 'one', cwd: dir, timeoutMs: 10_000 });
    const second = await runner(
      { FAKE_AGENT_RECORD: record },
      { permissionMode: 'acceptEdits', maxTurns: 3 },
    ).run({
      prompt: 'two',
      cwd: dir,
      timeoutMs: 10_000,
      ...(first.sessionId !== undefined && { sessionId: first.sessionId }),
    });
    const rec = await readRecord(record);
    expect(rec.argv).toEqual(expect.arrayContaining(['--resume', String(first.sessionId)]));
    expect(rec.argv.join(' ')).toContain('--permission-mode acceptEdits --max-turns 3');
    expect(second.sessionId).toBe(first.sessionId);
  });

  it('scrubs nested-run markers and unrelated secrets from the environment', async () => {
    const record = join(dir, 'record.json');
    await runner({ FAKE_AGENT_RECORD: record }).run({ prompt: 'x', cwd: dir, timeoutMs: 10_000 });
    const { env } = await readRecord(record);
    expect(env['CLAUDECODE']).toBeUndefined();
    expect(env['UNRELATED_SECRET']).toBeUndefined();
    expect(env['FAKE_AGENT_RECORD']).toBe(record);
    expect(env['PATH']).toBeDefined();
  });

  it('inherits the auth, provider and sandbox variables claude reads but not the nested-run markers', async () => {
    const record = join(dir, 'record.json');
    const parent = {
      CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat-1',
      CLAUDE_CODE_USE_FOUNDRY: '1',
      ANTHROPIC_FOUNDRY_API_KEY: 'foundry-key',
      ANTHROPIC_FOUNDRY_RESOURCE: 'my-resource',
      AZURE_CLIENT_ID: 'azure-client',
      CLAUDE_CODE_USE_BEDROCK: '1',
      AWS_BEARER_TOKEN_BEDROCK: 'bedrock-token',
      CLAUDE_CODE_USE_VERTEX: '1',
      GOOGLE_CLOUD_PROJECT: 'gcp-project',
      CLAUDE_CODE_HTTPS_PROXY: 'http://proxy.internal:3128',
      CLAUDE_CODE_CLIENT_CERT: '/certs/client.pem',
      IS_SANDBOX: '1',
    };
    // Nested-run markers (always dropped) and a CLAUDE_CODE_* tuning variable that is not auth.
    const dropped = {
      CLAUDE_CODE_ENTRYPOINT: 'cli',
      CLAUDE_CODE_SSE_PORT: '1234',
      CLAUDE_CODE_MAX_OUTPUT_TOKENS: '10',
    };
    await new CliAgentRunner({
      backend: claudeBackend,
      env: fakeParentEnv({ ...parent, ...dropped }),
      extraEnv: { FAKE_AGENT_RECORD: record },
    }).run({
      prompt: 'x',
      cwd: dir,
      timeoutMs: 10_000,
    });
    const { env } = await readRecord(record);
    for (const [name, value] of Object.entries(parent)) expect(env[name], name).toBe(value);
    for (const name of Object.keys(dropped)) expect(env[name], name).toBeUndefined();
  });

  it('decides failure by is_error even when subtype says success and reports the result text as the error', async () => {
    const result = await runner({ FAKE_AGENT_IS_ERROR: '1', FAKE_AGENT_EXIT_CODE: '0' }).run({
      prompt: 'x',
      cwd: dir,
      timeoutMs: 10_000,
    });
    expect(result).toMatchObject({
      exitCode: 0,
      isError: true,
      text: 'Not logged in · Please run /login',
      errorMessage: 'Not logged in · Please run /login',
    });
  });

  it('falls back to the raw text when the JSON is malformed and lets the exit code decide', async () => {
    const result = await runner({ FAKE_AGENT_MALFORMED_JSON: '1' }).run({
      prompt: 'x',
      cwd: dir,
      timeoutMs: 10_000,
    });
    expect(result).toMatchObject({ exitCode: 0, isError: false });
    expect(result.text).toContain('"is_error":fal');
    expect(result.sessionId).toBeUndefined();
  });

  it('reports the version when available', async () => {
    const availability = await runner({}).available();
    expect(availability).toMatchObject({ ready: true, version: '2.1.332 (Claude Code)' });
  });
});
