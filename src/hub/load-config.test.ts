import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isMusubiError } from '../core/errors.js';
import { loadConfig } from './load-config.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-config-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('config', () => {
  it('uses the defaults when there is no musubi.yaml', async () => {
    const config = await loadConfig({ cwd: dir, env: {} });
    expect(config.store).toBe('sqlite:.musubi/bus.db');
    expect(config.bus.retry).toEqual({ baseMs: 5_000, capMs: 300_000, maxAttempts: 3 });
  });

  it('layers file < environment < flags', async () => {
    await writeFile(
      join(dir, 'musubi.yaml'),
      'store: "memory:"\nlog:\n  level: debug\nbus:\n  leaseMs: 1234\n',
    );
    const fromFile = await loadConfig({ cwd: dir, env: {} });
    expect([fromFile.store, fromFile.log.level, fromFile.bus.leaseMs]).toEqual(['memory:', 'debug', 1234]);
    const fromEnv = await loadConfig({
      cwd: dir,
      env: { MUSUBI_STORE: 'sqlite:x.db', MUSUBI_LEASE_MS: '99' },
    });
    expect([fromEnv.store, fromEnv.bus.leaseMs]).toEqual(['sqlite:x.db', 99]);
    const fromFlags = await loadConfig({
      cwd: dir,
      env: { MUSUBI_STORE: 'sqlite:x.db' },
      flags: { store: 'memory:' },
    });
    expect(fromFlags.store).toBe('memory:');
  });

  it('reports every issue with its path when the file is invalid', async () => {
    await writeFile(
      join(dir, 'musubi.yaml'),
      'bus:\n  leaseMs: -1\n  retry: { baseMs: 10, capMs: 5 }\nbogus: 1\n',
    );
    const err: unknown = await loadConfig({ cwd: dir, env: {} }).catch((e: unknown) => e);
    expect(isMusubiError(err, 'CONFIG_INVALID')).toBe(true);
    const message = err instanceof Error ? err.message : '';
    expect(message).toContain('bus.leaseMs');
    expect(message).toContain('bus.retry.capMs');
    expect(message).toContain('bogus');
  });

  it('fails when an explicitly named config file is missing', async () => {
    const err: unknown = await loadConfig({ cwd: dir, env: {}, configPath: 'nope.yaml' }).catch(
      (e: unknown) => e,
    );
    expect(isMusubiError(err, 'CONFIG_INVALID')).toBe(true);
  });

  it('rejects a non-numeric environment override', async () => {
    const err: unknown = await loadConfig({ cwd: dir, env: { MUSUBI_LEASE_MS: 'soon' } }).catch(
      (e: unknown) => e,
    );
    expect(isMusubiError(err, 'CONFIG_INVALID')).toBe(true);
  });

  it.each([
    [
      'agent_sync beyond loopback',
      'gateways:\n  agentSync: { enabled: true, host: 0.0.0.0 }\n',
      ['gateways.agentSync.unauthenticatedNetworkAccess', 'no authentication'],
    ],
    [
      'the dashboard beyond loopback with a token only',
      'gateways:\n  http: { host: 0.0.0.0, token: a-long-enough-token-0001 }\n',
      ['gateways.http.networkAccess', 'on the network'],
    ],
    [
      'the dashboard beyond loopback with networkAccess only',
      'gateways:\n  http: { host: 0.0.0.0, networkAccess: true }\n',
      ['gateways.http.token'],
    ],
  ])('refuses %s until the setting that names the risk is given', async (_label, yaml, words) => {
    await writeFile(join(dir, 'musubi.yaml'), yaml);
    const err: unknown = await loadConfig({ cwd: dir, env: {} }).catch((e: unknown) => e);
    expect(isMusubiError(err, 'CONFIG_INVALID')).toBe(true);
    for (const word of words) expect(err instanceof Error ? err.message : '').toContain(word);
  });

  it('accepts binds beyond loopback once they are allowed explicitly', async () => {
    await writeFile(
      join(dir, 'musubi.yaml'),
      'gateways:\n  agentSync: { enabled: true, host: 0.0.0.0, unauthenticatedNetworkAccess: true }\n' +
        '  http: { host: 0.0.0.0, token: a-long-enough-token-0001, networkAccess: true }\n',
    );
    const config = await loadConfig({ cwd: dir, env: {} });
    expect(config.gateways.agentSync?.unauthenticatedNetworkAccess).toBe(true);
    expect(config.gateways.http?.networkAccess).toBe(true);
  });
});
