import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeParentEnv, makeTempDir, readRecord } from '../../../test/fakes/fake-cli-harness.js';
import { CliAgentRunner } from '../cli/cli-agent-runner.js';
import { copilotBackend } from './copilot-backend.js';

describe('copilot backend', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
  afterEach(() => cleanup());

  const runner = (extraEnv: Record<string, string>): CliAgentRunner =>
    new CliAgentRunner({
      backend: copilotBackend,
      env: fakeParentEnv({ GITHUB_TOKEN: 'ghp' }),
      extraEnv,
      model: 'gpt-5.2-mini',
    });

  it('runs copilot -p <prompt> --output-format json --allow-all-tools --no-ask-user and parses the events', async () => {
    const record = join(dir, 'record.json');
    const result = await runner({ FAKE_AGENT_RECORD: record }).run({
      prompt: '-review this',
      cwd: dir,
      timeoutMs: 10_000,
    });
    const rec = await readRecord(record);
    expect(rec.argv).toEqual([
      '-p',
      ' -review this',
      '--output-format',
      'json',
      '--allow-all-tools',
      '--no-ask-user',
      '--model',
      'gpt-5.2-mini',
    ]);
    expect(rec.prompt).toBe(' -review this');
    expect(rec.env['GITHUB_TOKEN']).toBe('ghp');
    expect(result).toMatchObject({
      backend: 'copilot',
      text: 'echo: -review this',
      exitCode: 0,
      isError: false,
    });
    expect(result.usage).toEqual({ inputTokens: 13, outputTokens: 18, costUsd: 0.0123 });
    expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('resumes with --resume <id>', async () => {
    const record = join(dir, 'record.json');
    const result = await runner({ FAKE_AGENT_RECORD: record }).run({
      prompt: 'x',
      cwd: dir,
      sessionId: 'c-1',
      timeoutMs: 10_000,
    });
    expect((await readRecord(record)).argv.slice(-2)).toEqual(['--resume', 'c-1']);
    expect(result.sessionId).toBe('c-1');
  });

  it('reports session.error as an error', async () => {
    const result = await runner({ FAKE_AGENT_IS_ERROR: '1' }).run({
      prompt: 'x',
      cwd: dir,
      timeoutMs: 10_000,
    });
    expect(result).toMatchObject({ isError: true, exitCode: 1, text: 'No authentication information found' });
  });
});
