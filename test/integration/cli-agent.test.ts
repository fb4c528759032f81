import { readFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_BIN_DIR, makeTempDir } from '../fakes/fake-cli-harness.js';
import { runCli } from '../fixtures/run-cli.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir, cleanup } = await makeTempDir('musubi-cli-agent-')));
afterAll(() => cleanup());

const withFakes = {
  PATH: `${FAKE_BIN_DIR}${delimiter}${dirname(process.execPath)}`,
  MUSUBI_STORE: 'memory:',
};
const withoutCli = { PATH: dirname(process.execPath), MUSUBI_STORE: 'memory:' };

describe('cli - agent commands', () => {
  it('doctor lists every backend as ready with its version when the CLIs are on PATH', async () => {
    const run = await runCli(['agent', 'doctor'], { cwd: dir, env: withFakes });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^claude +ready +2\.1\.332 \(Claude Code\)/m);
    expect(run.stdout).toMatch(/^codex +ready +codex-cli 0\.171\.0/m);
    expect(run.stdout).toMatch(/^opencode +ready +1\.18\.33/m);
    expect(run.stdout).toMatch(/^scripted +ready +built-in/m);
  });

  it('doctor says why a backend is not ready', async () => {
    const run = await runCli(['agent', 'doctor', '--json'], { cwd: dir, env: withoutCli });
    const rows: Array<{ backend: string; ready: boolean; reasons: string[] }> = JSON.parse(run.stdout);
    expect(rows.find((r) => r.backend === 'gemini')).toMatchObject({
      ready: false,
      reasons: ["agent CLI 'gemini' not found on PATH"],
    });
    expect(rows.find((r) => r.backend === 'scripted')).toMatchObject({ ready: true });
  });

  it('runs one scripted turn that writes a file and prints the JSON result', async () => {
    const prompt = 'write out/hello.txt hi there\nreply written';
    const run = await runCli(['agent', 'run', '--backend', 'scripted', '--cwd', dir, '--json', prompt], {
      cwd: dir,
      env: withoutCli,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      backend: 'scripted',
      text: 'written',
      exitCode: 0,
      usage: { inputTokens: 0 },
    });
    expect(await readFile(join(dir, 'out/hello.txt'), 'utf8')).toBe('hi there\n');
  });

  it('runs a claude turn through the fake and prints its text; resumes with --session', async () => {
    const run = await runCli(['agent', 'run', '--backend', 'claude', '--session', 's-1', '--json', 'hello'], {
      cwd: dir,
      env: withFakes,
    });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      text: 'echo: hello',
      sessionId: 's-1',
      usage: { costUsd: 0.0123 },
    });
  });

  it('fails with AGENT_NOT_FOUND, AGENT_TIMEOUT and PATH_OUTSIDE_CWD as coded errors', async () => {
    const missing = await runCli(['agent', 'run', '--backend', 'codex', 'x'], { cwd: dir, env: withoutCli });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe("musubi: AGENT_NOT_FOUND: agent CLI 'codex' not found on PATH\n");
    const slow = await runCli(['agent', 'run', '--backend', 'scripted', '--timeout', '100', 'sleep 5000'], {
      cwd: dir,
      env: withoutCli,
    });
    expect(slow.code).toBe(1);
    expect(slow.stderr).toMatch(/^musubi: AGENT_TIMEOUT: /);
    const outside = await runCli(['agent', 'run', '--backend', 'scripted', 'write ../x.txt no'], {
      cwd: dir,
      env: withoutCli,
    });
    expect(outside.stderr).toMatch(/^musubi: PATH_OUTSIDE_CWD: /);
    const unknown = await runCli(['agent', 'run', '--backend', 'gpt9', 'x'], { cwd: dir, env: withoutCli });
    expect(unknown.stderr).toMatch(/^musubi: AGENT_BACKEND_UNKNOWN: /);
  });
});
