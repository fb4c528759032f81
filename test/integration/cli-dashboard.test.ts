import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { urlFilePath } from '../../src/gateways/http/url-file.js';
import { startHttpHub, type HttpHub } from '../fixtures/http-hub.js';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';

let musubi: BundledCli;
beforeAll(async () => {
  musubi = await bundleCli();
});
afterAll(async () => {
  await musubi.remove();
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'musubi-dashboard-cli-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('cli - musubi dashboard', () => {
  it('prints the URL a running hub left beside its SQLite store, and fails once it stopped', async () => {
    const dir = await tempDir();
    const env = { MUSUBI_STORE: 'sqlite:state/bus.db' };
    const hub: HttpHub = await startHttpHub({
      urlFile: urlFilePath({ cwd: dir, sqliteFile: join(dir, 'state', 'bus.db') }),
    });
    cleanups.push(() => hub.close());
    const run = await musubi.run(['dashboard'], { cwd: dir, env });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(`${hub.base}/\n`);
    const json = await musubi.run(['dashboard', '--json'], { cwd: dir, env });
    expect(JSON.parse(json.stdout)).toEqual({ url: `${hub.base}/` });
    await hub.close();
    const after = await musubi.run(['dashboard'], { cwd: dir, env });
    expect(after.code).toBe(1);
    expect(after.stderr).toMatch(/^musubi: GATEWAY_UNAVAILABLE: no running hub serves a dashboard/);
  });

  it('finds a hub on the configured address and prints the URL with its token', async () => {
    const dir = await tempDir();
    const token = 'dashboard-token-0123456789';
    const hub = await startHttpHub({ token });
    cleanups.push(() => hub.close());
    const port = new URL(hub.base).port;
    const { writeFile } = await import('node:fs/promises');
    await writeFile(
      join(dir, 'musubi.yaml'),
      `store: "memory:"\ngateways:\n  http:\n    enabled: true\n    host: 127.0.0.1\n    port: ${port}\n    token: ${token}\n`,
    );
    const run = await musubi.run(['dashboard'], { cwd: dir });
    expect(run.stdout).toBe(`${hub.base}/?token=${token}\n`);
  });
});
