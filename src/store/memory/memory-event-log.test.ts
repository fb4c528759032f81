import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { EventKind, MemoryEventLog } from './memory-event-log.js';

describe('MemoryEventLog', () => {
  it('copies a caller event once and hands out frozen events nobody can change', () => {
    const log = new MemoryEventLog({ clock: new FakeClock(), retention: 10 });
    const data = { agent: 'bob', tags: ['a'] };
    const stored = log.append({ type: 'agent.started', data });
    data.tags.push('changed by the caller');
    const [read] = log.read(0, 10);
    expect(read).toBe(stored);
    expect(read).toMatchObject({ cursor: 1, data: { agent: 'bob', tags: ['a'] } });
    expect(Object.isFrozen(read)).toBe(true);
    const tags = read !== undefined && 'data' in read ? read.data['tags'] : undefined;
    expect(Array.isArray(tags) && Object.isFrozen(tags)).toBe(true);
    expect(() => Array.isArray(tags) && tags.push('x')).toThrow(TypeError);
  });

  it('builds frozen message events from what the store recorded, when they are read', () => {
    const clock = new FakeClock();
    const at = clock.now();
    const log = new MemoryEventLog({ clock, retention: 10 });
    log.record(EventKind.acked, 'bob', 'm');
    log.record(EventKind.claimed, 'bob', 'n', 2, 5_000);
    log.record(EventKind.deadLettered, 'bob', 'o', 0, 0, 'gave up');
    const read = log.read(0, 10);
    expect(read).toEqual([
      { type: 'message.acked', mailbox: 'bob', messageId: 'm', cursor: 1, at },
      {
        type: 'message.claimed',
        mailbox: 'bob',
        messageId: 'n',
        attempt: 2,
        leaseUntil: 5_000,
        cursor: 2,
        at,
      },
      { type: 'message.dead_lettered', mailbox: 'bob', messageId: 'o', reason: 'gave up', cursor: 3, at },
    ]);
    expect(read.every((e) => Object.isFrozen(e))).toBe(true);
    expect(log.lastCursor()).toBe(3);
  });

  it('keeps the newest events past its retention, growing its slots as it fills', () => {
    const log = new MemoryEventLog({ clock: new FakeClock(), retention: 2_500 });
    for (let i = 0; i < 6_000; i++) log.record(EventKind.acked, 'bob', `m${i}`);
    const read = log.read(0, 10_000);
    expect(read).toHaveLength(2_500);
    expect(read[0]).toMatchObject({ cursor: 3_501, messageId: 'm3500' });
    expect(read.at(-1)).toMatchObject({ cursor: 6_000, messageId: 'm5999' });
    expect(log.read(5_990, 3).map((e) => e.cursor)).toEqual([5_991, 5_992, 5_993]);
  });

  it('leaves the log as it was when a caller event cannot be copied', () => {
    const log = new MemoryEventLog({ clock: new FakeClock(), retention: 10 });
    log.record(EventKind.acked, 'bob', 'm');
    expect(() => log.append({ type: 'agent.beat', data: { run: () => 1 } } as never)).toThrow();
    expect(log.lastCursor()).toBe(1);
    log.record(EventKind.acked, 'bob', 'n');
    expect(log.read(0, 10).map((e) => [e.cursor, e.type])).toEqual([
      [1, 'message.acked'],
      [2, 'message.acked'],
    ]);
  });
});
