import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSystemClock } from '../../src/core/clock.js';
import type { NekoEvent } from '../../src/gateways/neko/neko-wire.js';
import { startNeko, until, type NekoHarness } from '../fixtures/neko-harness.js';
import { testPlugins } from '../fixtures/neko-plugins.js';

type Json = Record<string, unknown>;
const task = (e: NekoEvent): Json => (e['task'] ?? {}) as Json;

describe('N.E.K.O. agent server restart (SQLite store)', () => {
  let dir: string;
  const open: NekoHarness[] = [];
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'musubi-neko-restart-'))));
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
    await rm(dir, { recursive: true, force: true });
  });
  const boot = async (enable: boolean): Promise<NekoHarness> => {
    const plugins = testPlugins(createSystemClock());
    const h = await startNeko({ dir, store: 'sqlite', channels: [plugins.channel], enable });
    open.push(h);
    return h;
  };

  it('fails interrupted tasks, keeps deferred ones completable, and keeps flags, intent and revision', async () => {
    const first = await boot(false);
    await first.http('POST', '/agent/command', { command: 'set_agent_enabled', enabled: true });
    await first.http('POST', '/agent/flags', { user_plugin_enabled: true });
    await until(async () => (await first.http('GET', '/agent/flags')).body['agent_flags'] !== undefined);
    const running = (await first.http('POST', '/plugin/execute', { plugin_id: 'slow' })).body;
    expect(await first.say('please waiter wait')).toBe(true);
    await until(async () => (await first.registry.list()).some((t) => t.deferredUntil !== undefined));
    const deferred = (await first.registry.list()).find((t) => t.deferredUntil !== undefined);
    const revision = Number((await first.http('GET', '/agent/flags')).body['revision']);
    await first.close({ keepDir: true });
    open.splice(0);

    const second = await boot(false);
    const interrupted = await second.waitFor(
      (e) => e.event_type === 'task_update' && task(e)['status'] === 'failed',
    );
    expect(task(interrupted)).toMatchObject({
      id: running['task_id'],
      error: 'Interrupted by restart',
      end_time: expect.any(String),
    });
    expect((await second.http('GET', `/tasks/${String(deferred?.id)}`)).body).toMatchObject({
      status: 'running',
    });
    expect(await second.http('POST', `/api/agent/tasks/${String(deferred?.id)}/complete`)).toEqual({
      status: 200,
      body: { ok: true },
    });
    const flags = (await second.http('GET', '/agent/flags')).body;
    expect(flags).toMatchObject({ analyzer_enabled: true, agent_flags: { user_plugin_enabled: true } });
    expect(Number(flags['revision'])).toBeGreaterThanOrEqual(revision);
    await second.http('POST', '/agent/flags', { user_plugin_enabled: false });
    expect(Number((await second.http('GET', '/agent/flags')).body['revision'])).toBeGreaterThan(revision);
  });

  it('restores the persisted intent on the first restore signal only', async () => {
    const first = await boot(false);
    await first.http('POST', '/agent/command', { command: 'set_agent_enabled', enabled: true });
    await first.http('POST', '/agent/command', {
      command: 'set_flag',
      key: 'user_plugin_enabled',
      value: true,
    });
    // Switch off without touching the intent: the state is off, the intent stays on.
    await first.http('POST', '/agent/command', {
      command: 'set_agent_enabled',
      enabled: false,
      _persist_intent: false,
    });
    await first.http('POST', '/agent/flags', { user_plugin_enabled: false, _persist_intent: false });
    await first.close({ keepDir: true });
    open.splice(0);

    const second = await boot(false);
    expect((await second.http('GET', '/agent/flags')).body).toMatchObject({
      analyzer_enabled: false,
      agent_flags: { user_plugin_enabled: false },
    });
    const signal = { event_type: 'agent_intent_restore_signal', lanlan_name: 's1', new_session: true };
    // PUB drops messages until the subscription is through: repeat until the restore shows.
    await until(async () => {
      await second.main.publishSessionEvent(signal);
      const flags = (await second.http('GET', '/agent/flags')).body;
      return (
        flags['analyzer_enabled'] === true && (flags['agent_flags'] as Json)['user_plugin_enabled'] === true
      );
    });
    await second.http('POST', '/agent/command', {
      command: 'set_agent_enabled',
      enabled: false,
      _persist_intent: false,
    });
    await second.main.publishSessionEvent(signal);
    // A later request on the same socket is acked once the signal before it was handled.
    await second.main.publishSessionEvent({
      event_type: 'analyze_request',
      event_id: 'after-signal',
      messages: [],
    });
    await second.waitFor((e) => e.event_type === 'analyze_ack' && e['event_id'] === 'after-signal');
    expect((await second.http('GET', '/agent/flags')).body['analyzer_enabled']).toBe(false);
  });
});
