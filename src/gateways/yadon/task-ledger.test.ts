import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FakeClock } from '../../../test/fakes/fake-clock.js';
import { memoryBus } from '../../../test/fixtures/memory-bus.js';
import type { Bus } from '../../bus/bus.types.js';
import { createSilentLogger } from '../../core/logger.js';
import type { MemoryStore } from '../../store/memory/memory-store.js';
import { TaskRegistry } from '../../tasks/task-registry.js';
import { resultDoc } from './result-doc.js';
import { TaskLedger, taskRowId } from './task-ledger.js';

const DAY_MS = 24 * 3_600_000;
const input = (id: string, instruction = 'write a.txt\nthen b.txt') => ({
  id,
  instruction,
  projectDir: '/work',
});
const done = (id: string, status = 'success') =>
  resultDoc({ id, from: 'yadon-1', status, payload: { output: 'out', summary: `sum ${id}` } });

describe('TaskLedger', () => {
  let clock: FakeClock;
  let store: MemoryStore;
  let bus: Bus;
  let registry: TaskRegistry;
  const ledger = (agent = 'yadon-1', kind = 'subtask') =>
    new TaskLedger({ registry, kv: bus.kv, clock, logger: createSilentLogger(), agent, kind });

  beforeEach(() => {
    ({ bus, store, clock } = memoryBus({
      leaseMs: 30_000,
      retry: { baseMs: 5_000, capMs: 300_000, maxAttempts: 3 },
    }));
    registry = new TaskRegistry({ bus, clock, logger: createSilentLogger() });
  });

  afterEach(async () => {
    await registry.close();
    await bus.close();
    await store.close();
  });

  it('makes each socket submission a registry row whose state get_result reports', async () => {
    const l = ledger();
    await l.enqueue('sub-1', input('t.1'), { isInputInline: true });
    expect(await registry.get(taskRowId('yadon-1', 'sub-1'))).toMatchObject({
      owner: 'yadon',
      kind: 'subtask',
      agent: 'yadon-1',
      channel: 'socket',
      state: 'queued',
      title: 't.1: write a.txt',
      params: { taskId: 't.1', projectDir: '/work' },
    });
    expect(await l.lookup('t.1')).toEqual({ kind: 'state', state: 'queued' });
    expect(await l.admit('sub-1')).toBe('run');
    await l.start('sub-1');
    expect(await l.lookup('t.1')).toEqual({ kind: 'state', state: 'running' });
    expect(await l.finish('t.1', 'sub-1', done('t.1'))).toBe('done');
    expect(await registry.get(taskRowId('yadon-1', 'sub-1'))).toMatchObject({
      state: 'completed',
      result: { status: 'success', summary: 'sum t.1' },
    });
    expect(await l.lookup('t.1')).toEqual({ kind: 'done', doc: done('t.1') });
    expect(await l.admit('sub-1')).toBe('skip');
    expect(await l.lookup('other')).toEqual({ kind: 'unknown' });
  });

  it('keeps the result for get_result after the registry dropped the ended row', async () => {
    const l = ledger();
    await l.enqueue('sub-1', input('t1'), { isInputInline: true });
    await l.start('sub-1');
    await l.finish('t1', 'sub-1', done('t1', 'error'));
    expect(await registry.get(taskRowId('yadon-1', 'sub-1'))).toMatchObject({
      state: 'failed',
      error: 'sum t1',
    });
    clock.advance(301_000);
    await registry.sweep({ force: true });
    expect(await registry.get(taskRowId('yadon-1', 'sub-1'))).toBeNull();
    expect(await l.lookup('t1')).toEqual({ kind: 'done', doc: done('t1', 'error') });
  });

  it('answers a cancelled row as cancelled, and a cancel beats a result that arrives later', async () => {
    const l = ledger();
    await l.enqueue('sub-1', input('t1'), { isInputInline: true });
    await registry.cancel(taskRowId('yadon-1', 'sub-1'));
    expect(await l.lookup('t1')).toEqual({ kind: 'cancelled' });
    expect(await l.admit('sub-1')).toBe('cancelled');
    await l.enqueue('sub-2', input('t2'), { isInputInline: true });
    await l.start('sub-2');
    await registry.cancel(taskRowId('yadon-1', 'sub-2'));
    expect(await l.finish('t2', 'sub-2', done('t2'))).toBe('cancelled');
    clock.advance(301_000);
    await registry.sweep({ force: true });
    expect(await l.lookup('t2')).toEqual({ kind: 'cancelled' });
  });

  it('gives a bus task its row and record at its first claim, once', async () => {
    const l = ledger();
    const task = input('01J00000000000000000000000.x');
    expect(await l.admit('01J00000000000000000000000.x', task)).toBe('run');
    expect(await l.admit('01J00000000000000000000000.x', task)).toBe('run');
    const rows = await registry.list({ owner: 'yadon' });
    expect(rows.map((r) => [r.channel, r.state])).toEqual([['bus', 'queued']]);
    expect(await l.lookup(task.id)).toEqual({ kind: 'state', state: 'queued' });
  });

  it('interrupts what a restart finds unfinished, and only this agent’s, then expires old results', async () => {
    const l = ledger();
    const other = ledger('yadon-2');
    await l.enqueue('sub-1', input('queued'), { isInputInline: false });
    await l.enqueue('sub-2', input('running'), { isInputInline: true });
    await l.start('sub-2');
    await l.enqueue('sub-3', input('old'), { isInputInline: true });
    await l.finish('old', 'sub-3', done('old'));
    await other.enqueue('sub-4', input('elsewhere'), { isInputInline: true });
    clock.advance(8 * DAY_MS);
    expect(await l.recover(7 * DAY_MS)).toEqual({ interrupted: 2, expired: 1 });
    expect(await l.lookup('queued')).toEqual({ kind: 'interrupted' });
    expect(await l.lookup('running')).toEqual({ kind: 'interrupted' });
    expect(await l.lookup('old')).toEqual({ kind: 'unknown' });
    expect(await l.input('sub-1')).toBeNull();
    expect(await registry.get(taskRowId('yadon-1', 'sub-2'))).toMatchObject({
      state: 'failed',
      error: 'Interrupted by restart',
    });
    expect(await l.admit('sub-2')).toBe('skip');
    expect(await other.lookup('elsewhere')).toEqual({ kind: 'state', state: 'queued' });
  });

  it('cancels the live subtasks of a cancelled job on the other agents', async () => {
    const manager = ledger('yadoran', 'job');
    const worker = ledger('yadon-1');
    await manager.enqueue('job', input('task-a'), { isInputInline: true });
    await worker.enqueue('s1', input('task-a-implement-sub1'), { isInputInline: true });
    await worker.enqueue('s2', input('task-ab-implement-sub1'), { isInputInline: true });
    await worker.enqueue('s3', input('task-a-docs-sub1'), { isInputInline: true });
    await worker.finish('task-a-docs-sub1', 's3', done('task-a-docs-sub1'));
    expect(await manager.cancelSubtasks('task-a')).toBe(1);
    expect(await worker.lookup('task-a-implement-sub1')).toEqual({ kind: 'cancelled' });
    expect(await worker.lookup('task-ab-implement-sub1')).toEqual({ kind: 'state', state: 'queued' });
    expect(await manager.lookup('task-a')).toEqual({ kind: 'state', state: 'queued' });
  });
});
