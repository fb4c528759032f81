import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_ENTRY, runCli, TSX_LOADER } from '../fixtures/run-cli.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-dev-endpoint-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Starts `musubi dev model-endpoint <args>` and resolves once it printed its URL and the wiring lines. */
function startEndpoint(
  args: readonly string[],
  cwd = dir,
): Promise<{ url: string; stdout: () => string; stderr: () => string; stop(): Promise<number | null> }> {
  const child = spawn(
    process.execPath,
    ['--import', TSX_LOADER, CLI_ENTRY, 'dev', 'model-endpoint', ...args],
    {
      cwd,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed; stderr: ${err}`)), 20_000);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const url = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      if (url !== undefined && (!args.includes('--wire') || out.includes('export ANTHROPIC_BASE_URL'))) {
        clearTimeout(timer);
        resolve({
          url,
          stdout: () => out,
          stderr: () => err,
          stop: async () => {
            child.kill('SIGTERM');
            return exited;
          },
        });
      }
    });
    void exited.then((code) => reject(new Error(`exited ${String(code)} before printing its URL: ${err}`)));
  });
}

describe('cli - dev model-endpoint', () => {
  it('serves scripted answers, writes the wiring of a CLI, logs requests masked and stops on SIGTERM', async () => {
    const script = join(dir, 'script.yaml');
    await writeFile(script, 'rules:\n  - match: "^ping"\n    then: { reply: "pong" }\n');
    const endpoint = await startEndpoint([
      '--script',
      script,
      '--wire',
      'claude',
      '--config-dir',
      join(dir, 'cfg'),
    ]);
    expect(endpoint.stdout()).toContain(`export ANTHROPIC_BASE_URL='${endpoint.url}'`);
    expect(existsSync(join(dir, 'cfg', 'claude', '.claude.json'))).toBe(true);
    const res = await fetch(`${endpoint.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'sk-very-secret' },
      body: JSON.stringify({
        model: 'claude-test',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'ping please' }],
        tools: [{ name: 'Write', input_schema: { type: 'object', properties: {} } }],
      }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { content: Array<{ type: string; text?: string }> };
    expect(body.content).toEqual([expect.objectContaining({ type: 'text', text: 'pong' })]);
    expect(await endpoint.stop()).toBe(0);
    expect(endpoint.stderr()).toMatch(/anthropic POST \/v1\/messages claude-test -> 200 text/);
    expect(endpoint.stderr()).not.toContain('sk-very-secret');
    expect(await readFile(join(dir, 'cfg', 'claude', '.claude.json'), 'utf8')).toContain(
      'hasCompletedOnboarding',
    );
  });

  it('writes the wiring into the repository’s .musubi folder, kept out of git status, from any subfolder', async () => {
    execFileSync('git', ['init', '-q'], { cwd: dir });
    const sub = join(dir, 'src', 'deep');
    await mkdir(sub, { recursive: true });
    const endpoint = await startEndpoint(['--wire', 'claude'], sub);
    // One request answered: the endpoint is past its start-up and waits for its stop signal.
    await (await fetch(`${endpoint.url}/v1/models`)).body?.cancel();
    expect(await endpoint.stop()).toBe(0);
    expect(existsSync(join(dir, '.musubi', 'model-endpoint', 'claude', '.claude.json'))).toBe(true);
    expect(existsSync(join(sub, '.musubi'))).toBe(false);
    expect(await readFile(join(dir, '.git', 'info', 'exclude'), 'utf8')).toContain('/.musubi/');
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: dir, encoding: 'utf8' })).toBe('');
  });

  it('refuses a script that does not parse, naming the file', async () => {
    const script = join(dir, 'bad.yaml');
    await writeFile(script, 'default: { explode: 1 }\n');
    const run = await runCli(['dev', 'model-endpoint', '--script', script], { cwd: dir });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('musubi: CONFIG_INVALID:');
    expect(run.stderr).toContain('bad.yaml');
    const wire = await runCli(['dev', 'model-endpoint', '--wire', 'clippy'], { cwd: dir });
    expect(wire.code).toBe(2);
    expect(wire.stderr).toContain(
      "--wire takes one of claude, codex, gemini, copilot, opencode, got 'clippy'",
    );
  });
});
