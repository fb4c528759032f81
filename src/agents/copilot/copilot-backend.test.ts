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

  it('passes the prompt on stdin (no -p) with the non-interactive flags and a usage file in the scratch folder', async () => {
    const record = join(dir, 'record.json');
    const result = await runner({ FAKE_AGENT_RECORD: record }).run({
      prompt: '-review this',
      cwd: dir,
      timeoutMs: 10_000,
    });
    const rec = await readRecord(record);
    expect(rec.argv.slice(0, 6)).toEqual([
      '--output-format',
      'json',
      '--allow-all-tools',
      '--no-ask-user',
      '--no-auto-update',
      '--disable-client-telemetry',
    ]);
    expect(rec.argv[6]).toBe('--usage-output-file');
    expect(rec.argv[7]).toMatch(/musubi-copilot-[^/]+\/usage\.json$/);
    expect(rec.argv.slice(8)).toEqual(['--model', 'gpt-5.2-mini']);
    expect(rec.argv).not.toContain('-p');
    expect(rec.stdin).toBe('-review this');
    expect(rec.prompt).toBe('-review this');
    expect(rec.env['GITHUB_TOKEN']).toBe('ghp');
    expect(result).toMatchObject({
      backend: 'copilot',
      text: 'echo: -review this',
      exitCode: 0,
      isError: false,
    });
    expect(result.usage).toEqual({ inputTokens: 12, outputTokens: 18, costUsd: 0 });
    expect(result.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('passes a 200 KB prompt exactly when it is larger than one argument may be', async () => {
    const record = join(dir, 'record.json');
    const prompt = `start "quoted" ü\n${'x'.repeat(200 * 1024)}\nend`;
    await runner({ FAKE_AGENT_RECORD: record }).run({ prompt, cwd: dir, timeoutMs: 10_000 });
    expect((await readRecord(record)).stdin).toBe(prompt);
  });

  it("reports only this turn's usage when a session is resumed (the usage file holds session totals)", async () => {
    const copilotHome = join(dir, 'copilot-home');
    const r = runner({ COPILOT_HOME: copilotHome });
    const first = await r.run({ prompt: 'one two', cwd: dir, timeoutMs: 10_000 });
    expect(first.usage).toEqual({ inputTokens: 7, outputTokens: 13, costUsd: 0 });
    const second = await r.run({
      prompt: 'three',
      cwd: dir,
      timeoutMs: 10_000,
      ...(first.sessionId !== undefined && { sessionId: first.sessionId }),
    });
    expect(second.sessionId).toBe(first.sessionId);
    expect(second.usage).toEqual({ inputTokens: 5, outputTokens: 11, costUsd: 0 });
    // A new runner has no memory of the session: the events file still gives the totals before the turn.
    const third = await runner({ COPILOT_HOME: copilotHome }).run({
      prompt: 'four!',
      cwd: dir,
      timeoutMs: 10_000,
      ...(first.sessionId !== undefined && { sessionId: first.sessionId }),
    });
    expect(third.usage).toEqual({ inputTokens: 5, outputTokens: 11, costUsd: 0 });
  });

  it('inherits the GitHub, BYOK, Azure and state variables copilot reads, and not its nested-run marker', async () => {
    const record = join(dir, 'record.json');
    const env = {
      COPILOT_GITHUB_TOKEN: 'c',
      GH_TOKEN: 'g',
      GH_ENTERPRISE_TOKEN: 'e',
      GH_HOST: 'example.ghe.com',
      COPILOT_GH_HOST: 'github.com',
      COPILOT_PROVIDER_BASE_URL: 'http://127.0.0.1:1/v1',
      COPILOT_PROVIDER_TYPE: 'anthropic',
      COPILOT_PROVIDER_API_KEY: 'k',
      COPILOT_PROVIDER_WIRE_API: 'responses',
      COPILOT_MODEL: 'm',
      COPILOT_OFFLINE: 'true',
      COPILOT_HOME: join(dir, 'h'),
      COPILOT_PKG_CACHE_HOME: join(dir, 'pkg'),
      AZURE_CLIENT_ID: 'a',
      COPILOT_CLI: '1',
      COPILOT_AGENT_SESSION_ID: 'parent-session',
    };
    await new CliAgentRunner({
      backend: copilotBackend,
      env: fakeParentEnv(env),
      extraEnv: { FAKE_AGENT_RECORD: record },
    }).run({ prompt: 'x', cwd: dir, timeoutMs: 10_000 });
    const rec = await readRecord(record);
    const { COPILOT_CLI: _marker, COPILOT_AGENT_SESSION_ID: _parent, ...inherited } = env;
    for (const [name, value] of Object.entries(inherited)) expect(rec.env[name], name).toBe(value);
    expect(rec.env['COPILOT_CLI']).toBeUndefined();
    expect(rec.env['COPILOT_AGENT_SESSION_ID']).toBeUndefined();
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
    expect(result).toMatchObject({
      isError: true,
      exitCode: 1,
      text: 'No authentication information found',
      errorMessage: 'No authentication information found',
    });
  });
});
