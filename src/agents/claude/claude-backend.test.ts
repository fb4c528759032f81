import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeParentEnv, makeTempDir, readRecord } from '../../../test/fakes/fake-cli-harness.js';
import { CliAgentRunner } from '../cli/cli-agent-runner.js';
import { claudeBackend } from './claude-backend.js';

describe('claude backend', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
  afterEach(() => cleanup());

  const runner = (extraEnv: Record<string, string>, settings = {}): CliAgentRunner =>
    new CliAgentRunner({ backend: claudeBackend, env: fakeParentEnv(), extraEnv, model: 'haiku', settings });

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

  it('decides failure by is_error even when subtype says success', async () => {
    const result = await runner({ FAKE_AGENT_IS_ERROR: '1', FAKE_AGENT_EXIT_CODE: '0' }).run({
      prompt: 'x',
      cwd: dir,
      timeoutMs: 10_000,
    });
    expect(result).toMatchObject({ exitCode: 0, isError: true, text: 'Not logged in · Please run /login' });
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
