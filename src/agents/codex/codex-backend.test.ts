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

  const runner = (extraEnv: Record<string, string>, settings = {}): CliAgentRunner =>
    new CliAgentRunner({
      backend: codexBackend,
      env: fakeParentEnv({ OPENAI_API_KEY: 'sk-test' }),
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
    });
  });
});
