import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeParentEnv, makeTempDir, readRecord } from '../../../test/fakes/fake-cli-harness.js';
import { CliAgentRunner } from '../cli/cli-agent-runner.js';
import { opencodeBackend } from './opencode-backend.js';

describe('opencode backend', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
  afterEach(() => cleanup());

  const runner = (extraEnv: Record<string, string>): CliAgentRunner =>
    new CliAgentRunner({ backend: opencodeBackend, env: fakeParentEnv(), extraEnv, model: 'kimi/kimi-k2.5' });

  it('runs opencode run --format json --dir <cwd> -m <model> with the prompt on stdin and parses text, tokens and cost', async () => {
    const record = join(dir, 'record.json');
    const result = await runner({ FAKE_AGENT_RECORD: record }).run({
      prompt: 'refactor it',
      cwd: dir,
      timeoutMs: 10_000,
    });
    const rec = await readRecord(record);
    expect(rec.argv).toEqual(['run', '--format', 'json', '--dir', dir, '-m', 'kimi/kimi-k2.5']);
    expect(rec.stdin).toBe('refactor it');
    expect(result).toMatchObject({
      backend: 'opencode',
      text: 'echo: refactor it',
      exitCode: 0,
      isError: false,
    });
    expect(result.sessionId).toMatch(/^ses_/);
    expect(result.usage).toEqual({ inputTokens: 11, outputTokens: 17, costUsd: 0.0123 });
  });

  it('continues a session with --session <id>', async () => {
    const record = join(dir, 'record.json');
    const result = await runner({ FAKE_AGENT_RECORD: record }).run({
      prompt: 'x',
      cwd: dir,
      sessionId: 'ses_abc',
      timeoutMs: 10_000,
    });
    expect((await readRecord(record)).argv).toEqual(expect.arrayContaining(['--session', 'ses_abc']));
    expect(result.sessionId).toBe('ses_abc');
  });

  it('reports an error event as an error', async () => {
    const result = await runner({ FAKE_AGENT_IS_ERROR: '1' }).run({
      prompt: 'x',
      cwd: dir,
      timeoutMs: 10_000,
    });
    expect(result).toMatchObject({
      isError: true,
      exitCode: 1,
      text: 'No API key for provider',
      errorMessage: 'No API key for provider',
    });
  });

  it('passes the prompt on stdin exactly when it has quotes, newlines, a leading dash and non-ASCII', async () => {
    const record = join(dir, 'record.json');
    const prompt = '-n "say \\"hi\\"" it\'s\n\tnext line ✓ 日本語\n';
    await runner({ FAKE_AGENT_RECORD: record }).run({ prompt, cwd: dir, timeoutMs: 10_000 });
    const rec = await readRecord(record);
    expect(rec.stdin).toBe(prompt);
    expect(rec.prompt).toBe(prompt);
    expect(rec.argv).not.toContain(prompt);
  });

  it('passes a 200 KB prompt on stdin when it is larger than an argument may be', async () => {
    const record = join(dir, 'record.json');
    const prompt = `${'x'.repeat(200 * 1024)}\nend`;
    const result = await runner({ FAKE_AGENT_RECORD: record }).run({ prompt, cwd: dir, timeoutMs: 10_000 });
    expect(result.isError).toBe(false);
    expect((await readRecord(record)).stdin).toBe(prompt);
  });

  it('puts the system prompt in front of the prompt on stdin when one is set', async () => {
    const record = join(dir, 'record.json');
    await new CliAgentRunner({
      backend: opencodeBackend,
      env: fakeParentEnv(),
      extraEnv: { FAKE_AGENT_RECORD: record },
    }).run({ prompt: 'do it', systemPrompt: 'be brief', cwd: dir, timeoutMs: 10_000 });
    expect((await readRecord(record)).stdin).toBe('be brief\n\ndo it');
  });

  it('inherits the config, auth and provider variables opencode reads but not its nested-run markers', async () => {
    const record = join(dir, 'record.json');
    const inherited = {
      OPENCODE_CONFIG: '/c/opencode.json',
      OPENCODE_CONFIG_DIR: '/c',
      OPENCODE_CONFIG_CONTENT: '{}',
      OPENCODE_AUTH_CONTENT: '{}',
      OPENCODE_API_KEY: 'zen',
      OPENCODE_PERMISSION: '{}',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_MODELS_PATH: '/c/models.json',
      ANTHROPIC_API_KEY: 'a',
      OPENAI_API_KEY: 'o',
      GEMINI_API_KEY: 'g',
      GOOGLE_GENERATIVE_AI_API_KEY: 'g2',
      GOOGLE_VERTEX_PROJECT: 'p',
      GOOGLE_APPLICATION_CREDENTIALS: '/c/sa.json',
      OPENROUTER_API_KEY: 'r',
      MOONSHOT_API_KEY: 'm',
      KIMI_API_KEY: 'k',
      ZHIPU_API_KEY: 'z',
      XAI_API_KEY: 'x',
      AWS_ACCESS_KEY_ID: 'id',
      AWS_BEARER_TOKEN_BEDROCK: 'b',
      AWS_REGION: 'us-east-1',
      AZURE_RESOURCE_NAME: 'res',
    };
    const env = fakeParentEnv({ ...inherited, OPENCODE: '1', OPENCODE_PID: '42', OPENCODE_CLIENT: 'acp' });
    await new CliAgentRunner({ backend: opencodeBackend, env, extraEnv: { FAKE_AGENT_RECORD: record } }).run({
      prompt: 'x',
      cwd: dir,
      timeoutMs: 10_000,
    });
    const got = (await readRecord(record)).env;
    expect(got).toMatchObject(inherited);
    expect(got).not.toHaveProperty('OPENCODE');
    expect(got).not.toHaveProperty('OPENCODE_PID');
    expect(got).not.toHaveProperty('OPENCODE_CLIENT');
    expect(got).not.toHaveProperty('UNRELATED_SECRET');
  });
});
