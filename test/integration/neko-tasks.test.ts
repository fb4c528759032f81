import { afterEach, describe, expect, it } from 'vitest';
import type { NekoEvent } from '../../src/gateways/neko/neko-wire.js';
import { DEFERRED_TIMEOUT_ERROR } from '../../src/tasks/task-registry.js';
import { FakeChannel } from '../fakes/fake-channel.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { startNeko, until, type NekoHarness, type StartNekoOptions } from '../fixtures/neko-harness.js';
import { testPlugins } from '../fixtures/neko-plugins.js';

type Json = Record<string, unknown>;
const task = (e: NekoEvent): Json => (e['task'] ?? {}) as Json;
const isUpdate = (status: string, id?: string) => (e: NekoEvent) =>
  e.event_type === 'task_update' &&
  task(e)['status'] === status &&
  (id === undefined || task(e)['id'] === id);

describe('N.E.K.O. task lifecycle', () => {
  let h: NekoHarness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });
  const start = async (options: StartNekoOptions): Promise<NekoHarness> => (h = await startNeko(options));

  it('keeps a cancelled task cancelled when its run answers late, and emits no result for it', async () => {
    const shell = new FakeChannel({
      id: 'shell',
      group: 'computer_use',
      concurrency: 'exclusive',
      description: 'runs tests and builds',
      isManual: true,
      isIgnoringAbort: true,
    });
    const s = await start({ channels: [shell] });
    expect(await s.say('run the tests')).toBe(true);
    await until(() => shell.runs.length === 1);
    const firstId = shell.runs[0]?.task.id ?? '';
    expect(await s.say('run the builds')).toBe(true);
    const queued = await s.waitFor((e) => isUpdate('queued')(e) && task(e)['id'] !== firstId);
    const secondId = String(task(queued)['id']);
    expect((await s.registry.get(secondId))?.state).toBe('queued'); // exclusive: strictly one at a time
    const cancel = await s.http('POST', `/tasks/${firstId}/cancel`);
    expect(cancel.body).toEqual({ success: true, task_id: firstId, status: 'cancelled' });
    const update = await s.waitFor(isUpdate('cancelled', firstId));
    expect(task(update)).toMatchObject({
      type: 'computer_use',
      error: 'Cancelled by user',
      end_time: expect.any(String),
      params: { instruction: 'run the tests', screenshot: null },
    });
    await until(() => shell.cancels.includes(firstId)); // the channel's own cancel ran in the background
    shell.runs[0]?.finish({ success: true, summary: 'finished anyway' });
    // The FIFO scheduler starts the next task only after the late run was fully handled.
    await s.waitFor(isUpdate('running', secondId));
    expect((await s.registry.get(firstId))?.state).toBe('cancelled');
    expect(s.events.filter((e) => e.event_type === 'task_result')).toEqual([]);
    expect(s.events.some(isUpdate('completed', firstId))).toBe(false);
    shell.runs[1]?.finish();
    await s.waitFor((e) => e.event_type === 'task_result' && e['task_id'] === secondId);
  });

  it('end_all reports every active task cancelled first, then clears the registry', async () => {
    const shell = new FakeChannel({
      id: 'shell',
      group: 'computer_use',
      concurrency: 'exclusive',
      description: 'runs tests builds',
      isManual: true,
    });
    const s = await start({ channels: [shell] });
    await s.say('run the tests');
    await s.say('run the builds');
    await until(async () => (await s.registry.list({ states: ['queued', 'running'] })).length === 2);
    const ids = (await s.registry.list()).map((t) => t.id);
    expect((await s.http('POST', '/admin/control', { action: 'end_all' })).body['success']).toBe(true);
    // The updates cross the ZeroMQ bridge to main: they may arrive just after end_all's HTTP reply.
    for (const id of ids) await s.waitFor(isUpdate('cancelled', id));
    expect((await s.http('GET', '/tasks')).body['tasks']).toEqual([]);
    expect(shell.runs).toHaveLength(1); // the queued one never started
    // end_all forgets the consumed fingerprints: the same turn is analysed again.
    await s.say('run the tests');
    await until(() => shell.runs.length === 2);
  });

  it('reports progress, partial results, silent and blocked plugin outcomes', async () => {
    const shell = new FakeChannel({
      id: 'shell',
      group: 'computer_use',
      description: 'runs tests',
      isManual: true,
    });
    const plugins = testPlugins(new FakeClock());
    const s = await start({ channels: [shell, plugins.channel] });
    await s.say('run the tests');
    await until(() => shell.runs.length === 1);
    const run = shell.runs[0];
    run?.options.onProgress({ progress: 0.5, stage: 'testing', message: 'half way', step: 1, stepTotal: 2 });
    const progress = await s.waitFor((e) => isUpdate('running')(e) && task(e)['stage'] === 'testing');
    expect(task(progress)).toMatchObject({
      progress: 0.5,
      stage: 'testing',
      message: 'half way',
      step: 1,
      step_total: 2,
    });
    run?.finish({ success: false, summary: 'x'.repeat(600), detail: 'some passed' });
    const partial = await s.waitFor((e) => e.event_type === 'task_result');
    expect(partial).toMatchObject({ status: 'partial', success: false, detail: 'some passed' });
    expect(partial['summary']).toBe(partial['text']);
    expect(String(partial['summary'])).toHaveLength(500);
    expect(s.events.some(isUpdate('failed', String(partial['task_id'])))).toBe(true);

    await s.say('please quiet things');
    await until(() => plugins.calls.some((c) => c.plugin === 'quiet'));
    await s.say('please ask me back');
    const blocked = await s.waitFor((e) => e.event_type === 'task_result' && e['source_name'] === 'ask');
    expect(blocked).toMatchObject({ status: 'blocked', channel: 'user_plugin', source_kind: 'plugin' });
    expect(s.events.filter((e) => e.event_type === 'task_result' && e['source_name'] === 'quiet')).toEqual(
      [],
    );
    const quiet = (await s.registry.list()).find((t) => t.params['plugin_id'] === 'quiet');
    expect(quiet?.state).toBe('completed');
  });

  it('deletes terminal tasks (blocked included) 300 s after they end, checking at most once per 60 s', async () => {
    const clock = new FakeClock(Date.now());
    const plugins = testPlugins(clock);
    const s = await start({ channels: [plugins.channel], clock });
    await s.say('please ask me back');
    await s.waitFor((e) => e.event_type === 'task_result');
    const list = async () =>
      ((await s.http('GET', '/tasks')).body['tasks'] as Json[]).map((t) => t['status']);
    expect(await list()).toEqual(['blocked']);
    clock.advance(250_000);
    expect(await list()).toEqual(['blocked']);
    clock.advance(55_000); // 305 s after the end, but only 55 s after the last clean-up
    expect(await list()).toEqual(['blocked']);
    clock.advance(5_000);
    expect(await list()).toEqual([]);
  });

  it('fails a deferred task whose callback never comes, with no HTTP call', async () => {
    const clock = new FakeClock(Date.now());
    const plugins = testPlugins(clock);
    const s = await start({ channels: [plugins.channel], clock });
    await s.say('please waiter wait');
    await until(async () => (await s.registry.list())[0]?.deferredUntil !== undefined);
    expect(s.events.filter((e) => e.event_type === 'task_result')).toEqual([]);
    clock.advance(3_600_000 + 60_000);
    const failed = await s.waitFor(isUpdate('failed'));
    expect(task(failed)).toMatchObject({
      type: 'user_plugin',
      error: DEFERRED_TIMEOUT_ERROR,
      end_time: expect.any(String),
    });
    await s.waitFor((e) => e.event_type === 'agent_status_update');
  });
});
