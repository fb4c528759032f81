import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CliAgentRunner } from '../../src/agents/cli/cli-agent-runner.js';
import { claudeBackend } from '../../src/agents/claude/claude-backend.js';
import { codexBackend } from '../../src/agents/codex/codex-backend.js';
import { ChildReaper } from '../../src/agents/process/child-reaper.js';
import { isProcessAlive } from '../../src/agents/process/process-group.js';
import { runProcess } from '../../src/agents/process/run-process.js';
import { isMusubiError } from '../../src/core/errors.js';
import { fakeParentEnv, makeTempDir, readPids, readRecord, waitFor } from '../fakes/fake-cli-harness.js';

describe('agent process handling (fake CLIs, real processes)', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let pidFile: string;
  const reaper = new ChildReaper();
  beforeEach(async () => {
    ({ dir, cleanup } = await makeTempDir());
    pidFile = join(dir, 'pids');
  });
  afterEach(async () => {
    expect(reaper.liveGroups()).toEqual([]);
    await cleanup();
  });

  const claude = (
    extraEnv: Record<string, string>,
    options: { outputCapBytes?: number } = {},
  ): CliAgentRunner =>
    new CliAgentRunner({
      backend: claudeBackend,
      env: fakeParentEnv(),
      extraEnv,
      reaper,
      graceMs: 300,
      ...options,
    });

  it('kills the whole process tree on timeout, including a grandchild that ignores SIGTERM', async () => {
    const runner = claude({
      FAKE_AGENT_HANG: '1',
      FAKE_AGENT_IGNORE_SIGTERM: '1',
      FAKE_AGENT_GRANDCHILD: 'inherit',
      FAKE_AGENT_PID_FILE: pidFile,
    });
    const events: string[] = [];
    const result = await runner.run({
      prompt: 'x',
      cwd: dir,
      timeoutMs: 500,
      onEvent: (e) => events.push(e.type),
    });
    expect(result).toMatchObject({
      timedOut: true,
      canceled: false,
      isError: true,
      exitCode: null,
      signal: 'SIGKILL',
    });
    const pids = await readPids(pidFile);
    expect(pids['main']).toBeGreaterThan(0);
    expect(pids['grandchild']).toBeGreaterThan(0);
    expect(isProcessAlive(pids['main'] ?? 0)).toBe(false);
    expect(isProcessAlive(pids['grandchild'] ?? 0)).toBe(false);
    expect(events).toContain('stopping');
  });

  it('stops a cooperative CLI with SIGTERM before the grace period ends', async () => {
    const runner = claude({ FAKE_AGENT_HANG: '1' });
    const result = await runner.run({ prompt: 'x', cwd: dir, timeoutMs: 300 });
    expect(result).toMatchObject({ timedOut: true, signal: 'SIGTERM' });
  });

  it('cancels through the AbortSignal once the CLI is running, leaving no process behind', async () => {
    const controller = new AbortController();
    const runner = claude({
      FAKE_AGENT_HANG: '1',
      FAKE_AGENT_GRANDCHILD: 'ignore',
      FAKE_AGENT_PID_FILE: pidFile,
    });
    const result = await runner.run({
      prompt: 'x',
      cwd: dir,
      timeoutMs: 30_000,
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === 'session') controller.abort(new Error('user cancel'));
      },
    });
    expect(result).toMatchObject({ canceled: true, timedOut: false, isError: true });
    const pids = await readPids(pidFile);
    expect(isProcessAlive(pids['main'] ?? 0)).toBe(false);
    expect(isProcessAlive(pids['grandchild'] ?? 0)).toBe(false);
  });

  it('stops processes the CLI moved into sessions of their own (setsid) on timeout', async () => {
    const pids = join(dir, 'setsid-pids');
    const result = await runProcess({
      file: '/bin/sh',
      displayName: 'sh',
      args: ['-c', `setsid sleep 300 & echo $! > ${pids}; sleep 300`],
      cwd: dir,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
      timeoutMs: 500,
      graceMs: 300,
      reaper,
    });
    expect(result.timedOut).toBe(true);
    const escaped = Number((await readFile(pids, 'utf8')).trim());
    expect(escaped).toBeGreaterThan(0);
    await waitFor(() => !isProcessAlive(escaped), 3000, 'the setsid child to be gone');
  });

  it('does not start a process when the signal is already aborted', async () => {
    const runner = claude({ FAKE_AGENT_PID_FILE: pidFile });
    const result = await runner.run({
      prompt: 'x',
      cwd: dir,
      timeoutMs: 30_000,
      signal: AbortSignal.abort(),
    });
    expect(result).toMatchObject({ canceled: true, exitCode: null });
    await expect(readPids(pidFile)).rejects.toThrow();
  });

  it('stops a background grandchild left behind after a normal exit', async () => {
    const runner = claude({ FAKE_AGENT_GRANDCHILD: 'inherit', FAKE_AGENT_PID_FILE: pidFile });
    const result = await runner.run({ prompt: 'x', cwd: dir, timeoutMs: 10_000 });
    expect(result).toMatchObject({ exitCode: 0, isError: false, text: 'echo: x' });
    const pids = await readPids(pidFile);
    expect(isProcessAlive(pids['grandchild'] ?? 0)).toBe(false);
  });

  it('caps captured output and still parses the final result line', async () => {
    const runner = claude(
      { FAKE_AGENT_HUGE_OUTPUT_BYTES: String(6 * 1024 * 1024) },
      { outputCapBytes: 64 * 1024 },
    );
    const lines: number[] = [];
    const result = await runner.run({
      prompt: 'big',
      cwd: dir,
      timeoutMs: 20_000,
      onEvent: (e) => {
        if (e.type === 'line') lines.push(e.line.length);
      },
    });
    expect(result).toMatchObject({ isOutputTruncated: true, exitCode: 0, text: 'echo: big' });
    expect(Math.max(...lines)).toBeLessThanOrEqual(64 * 1024);
    expect(lines.length).toBeGreaterThan(6000);
  });

  it('rejects with AGENT_NOT_FOUND when the binary is not on PATH', async () => {
    const runner = new CliAgentRunner({ backend: claudeBackend, env: { PATH: dir }, reaper });
    const err: unknown = await runner
      .run({ prompt: 'x', cwd: dir, timeoutMs: 1000 })
      .catch((e: unknown) => e);
    expect(isMusubiError(err, 'AGENT_NOT_FOUND')).toBe(true);
    expect(String(err)).toContain("agent CLI 'claude' not found on PATH");
    expect(await runner.available()).toMatchObject({
      ready: false,
      reasons: ["agent CLI 'claude' not found on PATH"],
    });
  });

  it('rejects with AGENT_FAILED when the working directory does not exist', async () => {
    const err: unknown = await claude({})
      .run({ prompt: 'x', cwd: join(dir, 'missing'), timeoutMs: 1000 })
      .catch((e: unknown) => e);
    expect(isMusubiError(err, 'AGENT_FAILED')).toBe(true);
  });

  it('reports a non-zero exit with its code and stderr', async () => {
    const runner = new CliAgentRunner({
      backend: codexBackend,
      env: fakeParentEnv(),
      extraEnv: { FAKE_AGENT_EXIT_CODE: '3', FAKE_AGENT_STDERR: 'rate limited' },
      reaper,
    });
    const result = await runner.run({ prompt: 'x', cwd: dir, timeoutMs: 10_000 });
    expect(result).toMatchObject({ exitCode: 3, isError: true, text: 'echo: x' });
    expect(result.stderrTail).toContain('rate limited');
  });

  it('names the relevant stderr lines in errorMessage, skipping warnings', async () => {
    const runner = new CliAgentRunner({
      backend: codexBackend,
      env: fakeParentEnv(),
      extraEnv: {
        FAKE_AGENT_EXIT_CODE: '3',
        FAKE_AGENT_STDERR: 'Error: 401 Unauthorized: invalid api key\nWARNING: config key deprecated\n',
      },
      reaper,
    });
    const result = await runner.run({ prompt: 'x', cwd: dir, timeoutMs: 10_000 });
    expect(result.errorMessage).toBe('Error: 401 Unauthorized: invalid api key');
    const ok = await claude({}).run({ prompt: 'x', cwd: dir, timeoutMs: 10_000 });
    expect(ok.errorMessage).toBeUndefined();
  });

  it('inherits passEnv names and prefixes, and nothing else, from the parent environment', async () => {
    const record = join(dir, 'record.json');
    const runner = new CliAgentRunner({
      backend: claudeBackend,
      env: {
        ...fakeParentEnv(),
        IS_SANDBOX: '1',
        MY_TOKEN: 't',
        TEAM_A: 'a',
        TEAM_B: 'b',
        OTHER_SECRET: 's',
      },
      extraEnv: { FAKE_AGENT_RECORD: record },
      passEnv: ['MY_TOKEN', 'TEAM_*'],
      reaper,
    });
    await runner.run({ prompt: 'x', cwd: dir, timeoutMs: 10_000 });
    const { env } = await readRecord(record);
    expect(env).toMatchObject({ MY_TOKEN: 't', TEAM_A: 'a', TEAM_B: 'b' });
    expect(env).not.toHaveProperty('OTHER_SECRET');
  });

  it("passes the key variable a codex custom provider names in the user's config.toml", async () => {
    const record = join(dir, 'record.json');
    const codexHome = join(dir, 'codex-home');
    await mkdir(codexHome, { recursive: true });
    await writeFile(join(codexHome, 'config.toml'), '[model_providers.corp]\nenv_key = "CORP_LLM_KEY"\n');
    const runner = new CliAgentRunner({
      backend: codexBackend,
      env: { ...fakeParentEnv(), CODEX_HOME: codexHome, CORP_LLM_KEY: 'k', UNRELATED_KEY: 'u' },
      extraEnv: { FAKE_AGENT_RECORD: record },
      reaper,
    });
    await runner.run({ prompt: 'x', cwd: dir, timeoutMs: 10_000 });
    const { env } = await readRecord(record);
    expect(env).toMatchObject({ CORP_LLM_KEY: 'k' });
    expect(env).not.toHaveProperty('UNRELATED_KEY');
  });

  it('gives each turn a private scratch folder and removes it afterwards', async () => {
    const seen: Array<{ dir: string; mode: number }> = [];
    const runner = new CliAgentRunner({
      backend: {
        ...claudeBackend,
        buildInvocation: (turn) => {
          seen.push({ dir: turn.scratchDir, mode: statSync(turn.scratchDir).mode & 0o777 });
          return claudeBackend.buildInvocation(turn);
        },
      },
      env: fakeParentEnv(),
      reaper,
    });
    const result = await runner.run({ prompt: 'x', cwd: dir, timeoutMs: 10_000 });
    expect(result.isError).toBe(false);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.mode).toBe(0o700);
    expect(existsSync(seen[0]?.dir ?? '/')).toBe(false);
  });

  it('reports a crash as a failed run with the raw output', async () => {
    const result = await claude({ FAKE_AGENT_CRASH: '1' }).run({ prompt: 'x', cwd: dir, timeoutMs: 10_000 });
    expect(result).toMatchObject({ exitCode: 1, isError: true });
    expect(result.stderrTail).toContain('crashed on purpose');
  });

  it('reports an unknown flag the way the real CLI fails', async () => {
    const runner = new CliAgentRunner({
      backend: claudeBackend,
      env: fakeParentEnv(),
      reaper,
      settings: { permissionMode: 'bogus-mode' },
    });
    const result = await runner.run({ prompt: 'x', cwd: dir, timeoutMs: 10_000 });
    expect(result).toMatchObject({ exitCode: 1, isError: true });
    expect(result.stderrTail).toContain("argument 'bogus-mode' is invalid");
  });

  it('waits for the process to really be gone before resolving', async () => {
    const runner = claude({ FAKE_AGENT_HANG: '1', FAKE_AGENT_PID_FILE: pidFile });
    const running = runner.run({ prompt: 'x', cwd: dir, timeoutMs: 400 });
    await waitFor(() => existsSync(pidFile), 5000, 'pid file');
    await running;
    const pids = await readPids(pidFile);
    expect(isProcessAlive(pids['main'] ?? 0)).toBe(false);
  });
});
