import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_BIN_DIR, makeTempDir } from '../fakes/fake-cli-harness.js';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';

let dir: string;
let cleanup: () => Promise<void>;
let musubi: BundledCli;
beforeAll(async () => {
  [{ dir, cleanup }, musubi] = await Promise.all([makeTempDir('musubi-cli-agent-'), bundleCli()]);
});
afterAll(async () => {
  await cleanup();
  await musubi.remove();
});

const withFakes = {
  PATH: `${FAKE_BIN_DIR}${delimiter}${dirname(process.execPath)}`,
  MUSUBI_STORE: 'memory:',
};
const withoutCli = { PATH: dirname(process.execPath), MUSUBI_STORE: 'memory:' };

describe('cli - agent commands', () => {
  it('doctor lists every backend as found with its version, saying it only checked the binaries', async () => {
    const run = await musubi.run(['agent', 'doctor'], { cwd: dir, env: withFakes });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^claude +found +2\.1\.332 \(Claude Code\)/m);
    expect(run.stdout).toMatch(/^codex +found +codex-cli 0\.171\.0/m);
    expect(run.stdout).toMatch(/^opencode +found +1\.18\.33/m);
    expect(run.stdout).toMatch(/^scripted +ready +built-in/m);
    expect(run.stdout).toContain(
      'only the binaries were checked; `musubi agent doctor --probe` runs one real turn',
    );
  });

  it('doctor --probe runs one turn per backend and names an auth problem with its fix', async () => {
    const ok = await musubi.run(['agent', 'doctor', '--probe'], {
      cwd: dir,
      env: withFakes,
      timeoutMs: 60_000,
    });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^claude +ready +2\.1\.332/m);
    expect(ok.stdout).toMatch(/^gemini +ready /m);
    // backends.claude.passEnv hands the fake's knobs to claude only (names in the file, values from the env).
    const project = join(dir, 'probe-project');
    await mkdir(project, { recursive: true });
    await writeFile(join(project, 'musubi.yaml'), 'backends:\n  claude:\n    passEnv: [FAKE_AGENT_*]\n');
    const loggedOut = {
      ...withFakes,
      FAKE_AGENT_IS_ERROR: '1',
      FAKE_AGENT_TEXT: 'Not logged in · Please run /login',
    };
    const bad = await musubi.run(['agent', 'doctor', '--probe'], {
      cwd: project,
      env: loggedOut,
      timeoutMs: 60_000,
    });
    expect(bad.stdout).toMatch(/^codex +ready /m);
    expect(bad.stdout).toMatch(/^claude +auth +2\.1\.332/m);
    expect(bad.stdout).toContain('Not logged in · Please run /login');
    expect(bad.stdout).toContain('fix: set ANTHROPIC_API_KEY, or CLAUDE_CODE_OAUTH_TOKEN');
  });

  it('doctor says why a backend is not ready', async () => {
    const run = await musubi.run(['agent', 'doctor', '--json'], { cwd: dir, env: withoutCli });
    const rows: Array<{ backend: string; ready: boolean; reasons: string[] }> = JSON.parse(run.stdout);
    expect(rows.find((r) => r.backend === 'gemini')).toMatchObject({
      ready: false,
      reasons: ["agent CLI 'gemini' not found on PATH"],
    });
    expect(rows.find((r) => r.backend === 'scripted')).toMatchObject({ ready: true });
  });

  it('runs one scripted turn that writes a file and prints the JSON result', async () => {
    const prompt = 'write out/hello.txt hi there\nreply written';
    const run = await musubi.run(['agent', 'run', '--backend', 'scripted', '--cwd', dir, '--json', prompt], {
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
    const run = await musubi.run(
      ['agent', 'run', '--backend', 'claude', '--session', 's-1', '--json', 'hello'],
      {
        cwd: dir,
        env: withFakes,
      },
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      text: 'echo: hello',
      sessionId: 's-1',
      usage: { costUsd: 0.0123 },
    });
  });

  it('fails with AGENT_NOT_FOUND, AGENT_TIMEOUT and PATH_OUTSIDE_CWD as coded errors', async () => {
    const missing = await musubi.run(['agent', 'run', '--backend', 'codex', 'x'], {
      cwd: dir,
      env: withoutCli,
    });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe("musubi: AGENT_NOT_FOUND: agent CLI 'codex' not found on PATH\n");
    const slow = await musubi.run(
      ['agent', 'run', '--backend', 'scripted', '--timeout', '100', 'sleep 5000'],
      {
        cwd: dir,
        env: withoutCli,
      },
    );
    expect(slow.code).toBe(1);
    expect(slow.stderr).toMatch(/^musubi: AGENT_TIMEOUT: /);
    const outside = await musubi.run(['agent', 'run', '--backend', 'scripted', 'write ../x.txt no'], {
      cwd: dir,
      env: withoutCli,
    });
    expect(outside.stderr).toMatch(/^musubi: PATH_OUTSIDE_CWD: /);
    const unknown = await musubi.run(['agent', 'run', '--backend', 'gpt9', 'x'], {
      cwd: dir,
      env: withoutCli,
    });
    expect(unknown.stderr).toMatch(/^musubi: AGENT_BACKEND_UNKNOWN: /);
  });
});
