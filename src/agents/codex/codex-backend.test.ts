import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeParentEnv, makeTempDir, readRecord } from '../../../test/fakes/fake-cli-harness.js';
import { CliAgentRunner } from '../cli/cli-agent-runner.js';
import { codexBackend } from './codex-backend.js';

describe('codex backend', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
  afterEach(() => cleanup());

  const runner = (
    extraEnv: Record<string, string>,
    settings = {},
    parentEnv: Record<string, string> = {},
  ): CliAgentRunner =>
    new CliAgentRunner({
      backend: codexBackend,
      env: fakeParentEnv({ OPENAI_API_KEY: 'sk-test', ...parentEnv }),
      extraEnv,
      settings,
    });

  it('runs codex exec --json with the prompt on stdin and parses thread id, last message and usage', async () => {
    const record = join(dir, 'record.json');
    const result = await runner({ FAKE_AGENT_RECORD: record }).run({
      prompt: 'add tests',
      cwd: dir,
      model: 'o4',
      timeoutMs: 10_000,
      systemPrompt: 'SYS',
    });
    const rec = await readRecord(record);
    expect(rec.argv).toEqual([
      'exec',
      '--json',
      '--skip-git-repo-check',
      '-C',
      dir,
      '-m',
      'o4',
      '-s',
      'workspace-write',
      '-',
    ]);
    expect(rec.stdin).toBe('SYS\n\nadd tests');
    expect(rec.env['OPENAI_API_KEY']).toBe('sk-test');
    expect(result).toMatchObject({ backend: 'codex', text: 'echo: SYS', exitCode: 0, isError: false });
    expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.usage).toEqual({ inputTokens: 14, outputTokens: 9, costUsd: 0 });
  });

  it('resumes with `exec … resume <id> -` and maps the bypass permission mode', async () => {
    const record = join(dir, 'record.json');
    const result = await runner({ FAKE_AGENT_RECORD: record }, { permissionMode: 'bypass' }).run({
      prompt: 'again',
      cwd: dir,
      sessionId: 'thread-123',
      timeoutMs: 10_000,
    });
    const rec = await readRecord(record);
    expect(rec.argv.slice(-4)).toEqual([
      '--dangerously-bypass-approvals-and-sandbox',
      'resume',
      'thread-123',
      '-',
    ]);
    expect(result.sessionId).toBe('thread-123');
  });

  it('maps permissionMode auto to --approve-for-me without -s, which codex 0.171 refuses together', async () => {
    const record = join(dir, 'record.json');
    const result = await runner({ FAKE_AGENT_RECORD: record }, { permissionMode: 'auto' }).run({
      prompt: 'x',
      cwd: dir,
      timeoutMs: 10_000,
    });
    const rec = await readRecord(record);
    expect(rec.argv).toContain('--approve-for-me');
    expect(rec.argv).not.toContain('-s');
    expect(result).toMatchObject({ exitCode: 0, isError: false });
  });

  it("passes OPENAI_BASE_URL as codex's openai_base_url override when the parent sets it", async () => {
    const record = join(dir, 'record.json');
    await runner({ FAKE_AGENT_RECORD: record }, {}, { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' }).run({
      prompt: 'x',
      cwd: dir,
      timeoutMs: 10_000,
    });
    const rec = await readRecord(record);
    expect(rec.argv.slice(-3)).toEqual(['-c', 'openai_base_url="http://127.0.0.1:1/v1"', '-']);
  });

  it('inherits the auth, CA and endpoint-key variables codex reads when the parent sets them', async () => {
    const record = join(dir, 'record.json');
    const parent = {
      CODEX_API_KEY: 'k1',
      CODEX_ACCESS_TOKEN: 'k2',
      CODEX_CA_CERTIFICATE: '/ca.pem',
      OPENAI_ORGANIZATION: 'org',
      AWS_BEARER_TOKEN_BEDROCK: 'k3',
      MUSUBI_ENDPOINT_KEY: 'k4',
    };
    await runner({ FAKE_AGENT_RECORD: record }, {}, parent).run({ prompt: 'x', cwd: dir, timeoutMs: 10_000 });
    const rec = await readRecord(record);
    expect(rec.env).toMatchObject(parent);
    expect(rec.env['UNRELATED_SECRET']).toBeUndefined();
  });

  it('reports turn.failed as an error', async () => {
    const result = await runner({ FAKE_AGENT_IS_ERROR: '1' }).run({
      prompt: 'x',
      cwd: dir,
      timeoutMs: 10_000,
    });
    expect(result).toMatchObject({
      isError: true,
      exitCode: 1,
      text: 'stream disconnected before completion',
      errorMessage: 'stream disconnected before completion',
    });
  });
});
