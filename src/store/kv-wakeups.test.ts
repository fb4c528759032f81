import { describe, expect, it } from 'vitest';
import { KvWakeups } from './kv-wakeups.js';

describe('KvWakeups', () => {
  it('wakes only the running watches whose prefix the written key starts with', () => {
    const wakeups = new KvWakeups();
    const tasks = wakeups.watch('tasks/');
    const one = wakeups.watch('tasks/ab');
    const other = wakeups.watch('runs/');
    const releases = [tasks, one, other].map((w) => w.activate());
    wakeups.changed('tasks/abc');
    expect([tasks, one, other].map((w) => w.changes.version)).toEqual([1, 1, 0]);
    wakeups.changed('tasks/x');
    expect([tasks, one, other].map((w) => w.changes.version)).toEqual([2, 1, 0]);
    wakeups.wakeAll();
    expect([tasks, one, other].map((w) => w.changes.version)).toEqual([3, 2, 1]);
    releases.forEach((release) => release());
    wakeups.wakeAll();
    expect([tasks, one, other].map((w) => w.changes.version)).toEqual([3, 2, 1]);
  });

  it('does not wake a watch before it is active (its first read covers earlier writes)', () => {
    const wakeups = new KvWakeups();
    const watch = wakeups.watch('');
    wakeups.changed('k');
    expect(watch.changes.version).toBe(0);
    watch.activate();
    wakeups.changed('k');
    expect(watch.changes.version).toBe(1);
  });
});
