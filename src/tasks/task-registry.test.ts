import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import { createBus } from '../bus/bus.js';
import type { Bus } from '../bus/bus.types.js';
import { createIdGenerator } from '../core/ids.js';
import { createSilentLogger } from '../core/logger.js';
import { MemoryStore } from '../store/memory/memory-store.js';
import type { TaskChange } from './task-record.js';
import { DEFERRED_TIMEOUT_ERROR, TaskRegistry } from './task-registry.js';

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setImmediate(r));
  }
}

describe('TaskRegistry', () => {
  let clock: FakeClock;
  let store: MemoryStore;
  let bus: Bus;
  let registry: TaskRegistry;
  let changes: TaskChange[];

  beforeEach(() => {
    clock = new FakeClock();
    store = new MemoryStore({ clock });
    bus = createBus({
      store,
      clock,
      ids: createIdGenerator(clock),
      logger: createSilentLogger(),
      config: { leaseMs: 30_000, retry: { baseMs: 5_000, capMs: 300_000, maxAttempts: 3 } },
    });
    registry = new TaskRegistry({ bus, clock, logger: createSilentLogger() });
    changes = [];
    registry.onChange((c) => changes.push(c));
  });

  afterEach(async () => {
    await registry.close();
    await bus.close();
    await store.close();
  });

  it('creates queued tasks with UUID ids and lists them in creation order', async () => {
    const a = await registry.create({ owner: 'neko', kind: 'computer_use', params: { instruction: 'x' } });
    const b = await registry.create({ owner: 'neko', kind: 'browser_use', state: 'running' });
    const c = await registry.create({ owner: 'other', kind: 'job' });
    expect(a.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(a).toMatchObject({ state: 'queued', params: { instruction: 'x' }, createdAt: clock.now() });
    expect((await registry.list()).map((t) => t.id)).toEqual([a.id, b.id, c.id]);
    expect((await registry.list({ owner: 'neko', states: ['running'] })).map((t) => t.id)).toEqual([b.id]);
    expect(await registry.get(a.id)).toEqual(a);
    expect(await registry.get('../etc')).toBeNull();
    const events = await bus.readEvents();
    expect(events.filter((e) => e.type === 'task.changed')).toHaveLength(3);
  });

  it('lets terminal states win over later writes', async () => {
    const t = await registry.create({ owner: 'neko', kind: 'k' });
    clock.advance(5);
    expect((await registry.start(t.id))?.startedAt).toBe(clock.now());
    expect(await registry.start(t.id)).toBeNull();
    expect((await registry.progress(t.id, { stage: 'one', step: 1 }))?.progress).toEqual({
      stage: 'one',
      step: 1,
    });
    const cancelled = await registry.cancel(t.id);
    expect(cancelled).toMatchObject({ outcome: 'cancelled', task: { state: 'cancelled' } });
    expect(await registry.finish(t.id, { state: 'completed', result: 'late' })).toBeNull();
    expect(await registry.progress(t.id, { stage: 'late' })).toBeNull();
    expect(await registry.get(t.id)).toMatchObject({ state: 'cancelled', error: 'Cancelled by user' });
    expect(await registry.cancel(t.id)).toMatchObject({
      outcome: 'not_active',
      task: { state: 'cancelled' },
    });
    expect(await registry.cancel('nope')).toEqual({ outcome: 'not_found' });
    expect(changes.map((c) => c.reason)).toEqual(['created', 'started', 'progress', 'cancelled']);
  });

  it('aborts the run signal when a task is cancelled', async () => {
    const t = await registry.create({ owner: 'neko', kind: 'k', state: 'running' });
    const signal = registry.runSignal(t.id);
    expect(signal.aborted).toBe(false);
    await registry.cancel(t.id);
    expect(signal.aborted).toBe(true);
  });

  it('lists and recovers the tasks of one agent', async () => {
    const mine = await registry.create({ owner: 'yadon', kind: 'k', agent: 'yadon-1', state: 'running' });
    const theirs = await registry.create({ owner: 'yadon', kind: 'k', agent: 'yadon-2', state: 'running' });
    expect((await registry.list({ agent: 'yadon-1' })).map((t) => t.id)).toEqual([mine.id]);
    const failed = await registry.recover({ owner: 'yadon', agent: 'yadon-1', error: 'gone' });
    expect(failed.map((t) => [t.id, t.state, t.error])).toEqual([[mine.id, 'failed', 'gone']]);
    expect(await registry.get(theirs.id)).toMatchObject({ state: 'running' });
  });

  it('aborts watchEnd when another registry instance on the store cancels the task', async () => {
    const t = await registry.create({ owner: 'yadon', kind: 'k', state: 'running' });
    const run = new AbortController();
    const ended = registry.watchEnd(t.id, { signal: run.signal });
    await registry.progress(t.id, { stage: 'still running' });
    const elsewhere = new TaskRegistry({ bus, clock, logger: createSilentLogger() });
    await elsewhere.cancel(t.id);
    await until(() => ended.aborted);
    expect(String(ended.reason)).toContain(`task ${t.id} cancelled`);
    run.abort();
    await elsewhere.close();
  });

  it('aborts watchEnd at once for an unknown or ended task, and not after the run stopped watching', async () => {
    const none = new AbortController();
    const unknown = registry.watchEnd('missing', { signal: none.signal });
    await until(() => unknown.aborted);
    const done = await registry.create({ owner: 'yadon', kind: 'k', state: 'running' });
    await registry.finish(done.id, { state: 'completed' });
    const ended = registry.watchEnd(done.id, { signal: none.signal });
    await until(() => ended.aborted);
    const live = await registry.create({ owner: 'yadon', kind: 'k', state: 'running' });
    const run = new AbortController();
    const watched = registry.watchEnd(live.id, { signal: run.signal });
    const still = new AbortController();
    const witness = registry.watchEnd(live.id, { signal: still.signal });
    await registry.progress(live.id, { stage: 'one' });
    run.abort();
    await registry.cancel(live.id);
    // A watch still on sees the cancel; by then the stopped one would have seen it too.
    await until(() => witness.aborted);
    expect(watched.aborted).toBe(false);
    still.abort();
  });

  it('ends all active tasks of one owner and clears them', async () => {
    const a = await registry.create({ owner: 'neko', kind: 'k' });
    const b = await registry.create({ owner: 'neko', kind: 'k', state: 'running' });
    const done = await registry.create({ owner: 'neko', kind: 'k', state: 'running' });
    await registry.finish(done.id, { state: 'completed' });
    const other = await registry.create({ owner: 'other', kind: 'k' });
    const ended = await registry.endAll({ owner: 'neko' });
    expect(ended.map((t) => t.id)).toEqual([a.id, b.id]);
    expect(ended.every((t) => t.endedAt === clock.now())).toBe(true);
    await registry.clear({ owner: 'neko' });
    expect((await registry.list()).map((t) => t.id)).toEqual([other.id]);
  });

  it('deletes terminal tasks 300 s after they end, checking at most once per 60 s', async () => {
    const t = await registry.create({ owner: 'neko', kind: 'k', state: 'running' });
    await registry.finish(t.id, { state: 'blocked' });
    expect((await registry.sweep()).deleted).toEqual([]);
    clock.advance(301_000);
    expect((await registry.sweep()).deleted.map((d) => d.id)).toEqual([t.id]);
    expect(await registry.get(t.id)).toBeNull();
  });

  it('runs the lazy clean-up at most once per interval', async () => {
    const t = await registry.create({ owner: 'neko', kind: 'k', state: 'running' });
    await registry.finish(t.id, { state: 'completed' });
    clock.advance(250_000);
    await registry.sweep();
    clock.advance(51_000); // 301 s after the end, but only 51 s after the last pass
    expect((await registry.sweep()).deleted).toEqual([]);
    expect(await registry.get(t.id)).not.toBeNull();
    clock.advance(9_000);
    expect((await registry.sweep()).deleted.map((d) => d.id)).toEqual([t.id]);
  });

  it('completes deferred tasks and reports why it will not', async () => {
    const t = await registry.create({ owner: 'neko', kind: 'k', state: 'running' });
    expect(await registry.completeDeferred(t.id)).toMatchObject({ outcome: 'not_deferred' });
    await registry.defer(t.id);
    expect(await registry.get(t.id)).toMatchObject({
      state: 'running',
      deferredUntil: clock.now() + 3_600_000,
    });
    expect(await registry.completeDeferred(t.id)).toMatchObject({
      outcome: 'completed',
      task: { state: 'completed', endedAt: clock.now() },
    });
    expect(await registry.completeDeferred(t.id)).toMatchObject({ outcome: 'not_running' });
    expect(await registry.completeDeferred('missing')).toEqual({ outcome: 'not_found' });
  });

  it('fails a deferred task past its deadline from the timer, with no call from outside', async () => {
    const t = await registry.create({ owner: 'neko', kind: 'k', state: 'running' });
    await registry.defer(t.id);
    clock.advance(3_600_000 + 60_000);
    await until(() => changes.some((c) => c.reason === 'timed_out'));
    expect(await registry.get(t.id)).toMatchObject({ state: 'failed', error: DEFERRED_TIMEOUT_ERROR });
    expect(clock.pendingTimers()).toBe(0);
  });

  it('fails interrupted tasks on recovery and keeps deferred ones running', async () => {
    const queued = await registry.create({ owner: 'neko', kind: 'k' });
    const deferred = await registry.create({ owner: 'neko', kind: 'k', state: 'running' });
    await registry.defer(deferred.id);
    await registry.close();
    const second = new TaskRegistry({ bus, clock, logger: createSilentLogger() });
    const failed = await second.recover({ owner: 'neko' });
    expect(failed.map((t) => [t.id, t.state, t.error])).toEqual([
      [queued.id, 'failed', 'Interrupted by restart'],
    ]);
    expect(await second.get(deferred.id)).toMatchObject({ state: 'running' });
    expect(clock.pendingTimers()).toBe(1);
    const next = await second.create({ owner: 'neko', kind: 'k' });
    expect((await second.list()).at(-1)?.id).toBe(next.id);
    await second.close();
    expect(clock.pendingTimers()).toBe(0);
  });
});
