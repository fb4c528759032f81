import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';

let dir: string;
let musubi: BundledCli;
beforeAll(async () => {
  [dir, musubi] = await Promise.all([mkdtemp(join(tmpdir(), 'musubi-up-')), bundleCli()]);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await musubi.remove();
});

describe('cli - musubi up', () => {
  it('starts the hub and stops cleanly with exit 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, [musubi.entry, 'up', '--log-level', 'warn', '--http-port', '0'], {
      cwd: dir,
      env: { ...process.env, MUSUBI_STORE: 'sqlite:state/bus.db' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error(`hub did not start: ${stdout}`)), 15_000);
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        stdout += d;
        if (stdout.includes('dashboard: ')) {
          clearTimeout(deadline);
          resolve();
        }
      });
    });
    // The hub's store is usable by another process while it runs.
    const sent = await musubi.run(['bus', 'send', '--to', 'w', '--type', 't'], {
      cwd: dir,
      env: { MUSUBI_STORE: 'sqlite:state/bus.db' },
    });
    expect(sent.code).toBe(0);
    // The dashboard is served on the port the OS picked and answers its health route.
    const url = /dashboard: (http:\/\/\S+)/.exec(stdout)?.[1];
    expect(url).toBeDefined();
    const health = await fetch(new URL('api/health', url));
    expect(health.status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stdout).toContain('musubi hub stopping');
  });

  it('prints help and version', async () => {
    const help = await musubi.run(['--help'], { cwd: dir });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: musubi');
    expect(help.stdout).toContain('bus');
    const version = await musubi.run(['--version'], { cwd: dir });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('refuses an invalid config with CONFIG_INVALID and exit 1', async () => {
    const run = await musubi.run(['up'], { cwd: dir, env: { MUSUBI_LEASE_MS: 'never' } });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^musubi: CONFIG_INVALID: /);
  });
});
