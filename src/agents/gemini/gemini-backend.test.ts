import { join } from 'node:path';
import type { AgentRunEvent } from '../agent-runner.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeParentEnv, makeTempDir, readRecord } from '../../../test/fakes/fake-cli-harness.js';
import { CliAgentRunner } from '../cli/cli-agent-runner.js';
import { geminiBackend } from './gemini-backend.js';

describe('gemini backend', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
  afterEach(() => cleanup());

  const runner = (extraEnv: Record<string, string>, settings = {}): CliAgentRunner =>
    new CliAgentRunner({
      backend: geminiBackend,
      env: fakeParentEnv({ GEMINI_API_KEY: 'g-key', GOOGLE_CLOUD_PROJECT: 'p' }),
      extraEnv,
      settings,
    });

  it('runs gemini -p with the prompt on stdin, --yolo --skip-trust, and parses its stream-json lines', async () => {
    const record = join(dir, 'record.json');
    const events: AgentRunEvent[] = [];
    const result = await runner({ FAKE_AGENT_RECORD: record }).run({
      prompt: 'write docs',
      cwd: dir,
      model: 'gemini-3-flash-preview',
      timeoutMs: 10_000,
      onEvent: (e) => events.push(e),
    });
    const rec = await readRecord(record);
    expect(rec.argv).toEqual([
      '-p',
      '',
      '-o',
      'stream-json',
      '-m',
      'gemini-3-flash-preview',
      '--yolo',
      '--skip-trust',
    ]);
    expect(rec.stdin).toBe('write docs');
    expect(rec.env['GEMINI_API_KEY']).toBe('g-key');
    expect(rec.env['GOOGLE_CLOUD_PROJECT']).toBe('p');
    expect(result).toMatchObject({
      backend: 'gemini',
      text: 'echo: write docs',
      exitCode: 0,
      isError: false,
    });
    expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.usage).toEqual({ inputTokens: 12, outputTokens: 16, costUsd: 0 });
    expect(events.filter((e) => e.type !== 'started' && e.type !== 'line')).toEqual([
      { type: 'session', sessionId: result.sessionId },
      { type: 'message', text: 'echo: write docs' },
      { type: 'usage', usage: result.usage },
    ]);
  });

  it('passes --resume <session> and an approval mode from config', async () => {
    const record = join(dir, 'record.json');
    const result = await runner({ FAKE_AGENT_RECORD: record }, { permissionMode: 'auto_edit' }).run({
      prompt: 'x',
      cwd: dir,
      sessionId: 'sess-9',
      timeoutMs: 10_000,
    });
    const rec = await readRecord(record);
    expect(rec.argv.slice(-5)).toEqual([
      '--approval-mode',
      'auto_edit',
      '--skip-trust',
      '--resume',
      'sess-9',
    ]);
    expect(result.sessionId).toBe('sess-9');
  });

  it('reports the message and exit code 41 of an unauthenticated run', async () => {
    const result = await runner({ FAKE_AGENT_IS_ERROR: '1' }).run({
      prompt: 'x',
      cwd: dir,
      timeoutMs: 10_000,
    });
    expect(result).toMatchObject({ isError: true, exitCode: 41 });
    expect(result.text).toContain('Please set an Auth method');
  });

  it('inherits the auth, endpoint and home variables gemini reads but not the rest of GEMINI_* / GOOGLE_*', async () => {
    const record = join(dir, 'record.json');
    const source = {
      GEMINI_API_KEY: 'g',
      GOOGLE_API_KEY: 'a',
      GOOGLE_GENAI_USE_VERTEXAI: 'true',
      GOOGLE_GENAI_USE_GCA: 'true',
      GOOGLE_CLOUD_PROJECT: 'p',
      GOOGLE_CLOUD_LOCATION: 'us-central1',
      GOOGLE_APPLICATION_CREDENTIALS: '/adc.json',
      GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:1',
      GOOGLE_VERTEX_BASE_URL: 'http://127.0.0.1:2',
      GEMINI_CLI_HOME: '/gh',
      GEMINI_CLI: '1',
      SANDBOX: 'gemini-sandbox',
      GEMINI_SYSTEM_MD: '/elsewhere.md',
      GOOGLE_CHROME_BIN: '/chrome',
    };
    await new CliAgentRunner({
      backend: geminiBackend,
      env: fakeParentEnv(source),
      extraEnv: { FAKE_AGENT_RECORD: record },
    }).run({ prompt: 'x', cwd: dir, timeoutMs: 10_000 });
    const { env } = await readRecord(record);
    for (const name of Object.keys(source).slice(0, 10))
      expect(env[name], name).toBe(source[name as keyof typeof source]);
    for (const name of ['GEMINI_CLI', 'SANDBOX', 'GEMINI_SYSTEM_MD', 'GOOGLE_CHROME_BIN'])
      expect(env[name], name).toBeUndefined();
  });
});
