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

  it('runs opencode run --format json --dir <cwd> -m <model> <prompt> and parses text, tokens and cost', async () => {
    const record = join(dir, 'record.json');
    const result = await runner({ FAKE_AGENT_RECORD: record }).run({
      prompt: 'refactor it',
      cwd: dir,
      timeoutMs: 10_000,
    });
    const rec = await readRecord(record);
    expect(rec.argv).toEqual([
      'run',
      '--format',
      'json',
      '--dir',
      dir,
      '-m',
      'kimi/kimi-k2.5',
      'refactor it',
    ]);
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
    expect(result).toMatchObject({ isError: true, exitCode: 1, text: 'No API key for provider' });
  });
});
