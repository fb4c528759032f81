import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/hub/load-config.js';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';

let musubi: BundledCli;
beforeAll(async () => {
  musubi = await bundleCli();
});
afterAll(async () => {
  await musubi.remove();
});

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A project folder and a PATH on which `claude` and `codex` exist (never run: init only looks). */
async function project(): Promise<{ dir: string; env: NodeJS.ProcessEnv }> {
  const dir = await mkdtemp(join(tmpdir(), 'musubi-init-'));
  dirs.push(dir);
  const bin = join(dir, '.bin');
  await mkdir(bin);
  for (const name of ['claude', 'codex']) {
    await writeFile(join(bin, name), '#!/bin/sh\nexit 0\n');
    await chmod(join(bin, name), 0o755);
  }
  return { dir, env: { PATH: `${bin}${delimiter}${dirname(process.execPath)}${delimiter}/usr/bin:/bin` } };
}

describe('musubi init', { timeout: 120_000 }, () => {
  it('writes a musubi.yaml for the CLIs on PATH that loads, and prints the MCP and hook lines', async () => {
    const { dir, env } = await project();
    const result = await musubi.run(['init'], { cwd: dir, env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`wrote ${join(dir, 'musubi.yaml')} for claude, codex`);
    expect(result.stdout).toContain('"args": [\n        "mcp",\n        "--agent",\n        "claude-1"');
    expect(result.stdout).toContain(
      'AGENT_SYNC_NAME=claude-1 musubi agent-sync hook block-stop --format claude',
    );
    expect(result.stdout).toContain(
      '[mcp_servers.musubi]\ncommand = "musubi"\nargs = ["mcp", "--agent", "codex-1"]',
    );
    const yaml = await readFile(join(dir, 'musubi.yaml'), 'utf8');
    expect(yaml).toContain('--dangerously-skip-permissions');
    const config = await loadConfig({ cwd: dir, env: {} });
    expect(config.agents).toEqual({ 'claude-1': { backend: 'claude' }, 'codex-1': { backend: 'codex' } });
    expect(config.teams['main']).toEqual({ pattern: 'three-phase', agents: ['claude-1', 'codex-1'] });

    const again = await musubi.run(['init'], { cwd: dir, env });
    expect(again.stdout).toContain('musubi.yaml exists');
    expect(await readFile(join(dir, 'musubi.yaml'), 'utf8')).toBe(yaml);
  });

  it('with --write adds the lines once, keeps what the files had, and refuses a file it cannot read', async () => {
    const { dir, env } = await project();
    await writeFile(join(dir, '.mcp.json'), JSON.stringify({ mcpServers: { other: { command: 'x' } } }));
    const first = await musubi.run(['init', '--write'], { cwd: dir, env });
    expect(first.stdout).toContain(
      'added the MCP and hook lines to .mcp.json, .claude/settings.json, .codex/config.toml',
    );
    const mcp = JSON.parse(await readFile(join(dir, '.mcp.json'), 'utf8')) as {
      mcpServers: Record<string, unknown>;
    };
    expect(Object.keys(mcp.mcpServers)).toEqual(['other', 'musubi']);
    const settings = await readFile(join(dir, '.claude', 'settings.json'), 'utf8');
    expect(settings).toContain('musubi agent-sync hook check-messages --format claude');
    const second = await musubi.run(['init', '--write'], { cwd: dir, env });
    expect(second.stdout).toContain('the MCP and hook lines were already there');
    expect(await readFile(join(dir, '.claude', 'settings.json'), 'utf8')).toBe(settings);
    expect(
      (await readFile(join(dir, '.codex', 'config.toml'), 'utf8')).match(/\[mcp_servers\.musubi\]/g),
    ).toHaveLength(1);

    const broken = await project();
    await writeFile(join(broken.dir, '.mcp.json'), '{ not json');
    const refused = await musubi.run(['init', '--write'], { cwd: broken.dir, env: broken.env });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/CONFIG_INVALID: .*\.mcp\.json is not a JSON object/);
    expect(await readFile(join(broken.dir, '.mcp.json'), 'utf8')).toBe('{ not json');
  });
});
