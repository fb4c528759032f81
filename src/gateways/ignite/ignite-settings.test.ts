import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveRuntimeDir, resolveWorkspace } from './ignite-paths.js';
import { IGNITE_DEFAULTS, loadIgniteSettings } from './ignite-settings.js';

describe('ignite settings and paths', () => {
  it('merges defaults < system.yaml < environment < flags', () => {
    expect(loadIgniteSettings({ env: {} })).toMatchObject({
      ...IGNITE_DEFAULTS,
      session: '',
      isWatching: true,
    });
    const yaml = { queue: { poll_interval: 3, parallel_max: 2 }, defaults: { task_timeout: 60 } };
    const s = loadIgniteSettings({
      systemYaml: yaml,
      env: { QUEUE_PARALLEL_MAX: '6', RETRY_BASE_DELAY: '0.05', IGNITE_SESSION: 'env' },
      flags: { intervalSeconds: '7', session: 'flag' },
    });
    expect(s).toMatchObject({
      pollIntervalMs: 7000,
      parallelMax: 6,
      taskTimeoutMs: 60_000,
      retryBaseMs: 50,
      session: 'flag',
    });
  });

  it('puts musubi.yaml settings above system.yaml and below the environment, skipping unset ones', () => {
    const s = loadIgniteSettings({
      systemYaml: { queue: { poll_interval: 3, parallel_max: 2, max_turn: 60 } },
      musubiConfig: { pollIntervalMs: 4000, parallelMax: 5, maxTurnMs: undefined },
      env: { QUEUE_PARALLEL_MAX: '6' },
    });
    expect(s).toMatchObject({ pollIntervalMs: 4000, parallelMax: 6, maxTurnMs: 60_000 });
  });

  it('rejects bad values with CONFIG_INVALID naming the source', () => {
    expect(() => loadIgniteSettings({ env: { DLQ_MAX_RETRIES: 'x' } })).toThrow(/DLQ_MAX_RETRIES/);
    expect(() => loadIgniteSettings({ systemYaml: { defaults: { task_timeout: 5 } }, env: {} })).toThrow(
      /task_timeout/,
    );
    expect(() => loadIgniteSettings({ env: { QUEUE_PARALLEL_MAX: '0' } })).toThrow(/parallelMax/);
  });

  it('resolves the workspace and the runtime dir as IGNITE does', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'musubi-ignite-paths-'));
    try {
      expect(resolveWorkspace({ flag: 'w', env: { IGNITE_WORKSPACE: '/x' }, cwd: dir })).toBe(join(dir, 'w'));
      expect(resolveWorkspace({ env: { IGNITE_WORKSPACE: '/x', WORKSPACE_DIR: '/y' }, cwd: dir })).toBe('/x');
      expect(resolveWorkspace({ env: { WORKSPACE_DIR: '/y' }, cwd: dir })).toBe(dir);
      expect(resolveWorkspace({ env: { WORKSPACE_DIR: '/y' }, cwd: dir, isMonitor: true })).toBe('/y');
      expect(resolveRuntimeDir(dir, {})).toBe(dir);
      await mkdir(join(dir, '.ignite'));
      expect(resolveRuntimeDir(dir, {})).toBe(join(dir, '.ignite'));
      expect(resolveRuntimeDir(dir, { IGNITE_RUNTIME_DIR: '/rt' })).toBe('/rt');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
