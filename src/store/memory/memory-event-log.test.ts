import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { MemoryEventLog } from './memory-event-log.js';

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

  it('freezes the message events the store records', () => {
    const log = new MemoryEventLog({ clock: new FakeClock(), retention: 10 });
    const stored = log.record({ type: 'message.acked', mailbox: 'bob', messageId: 'm' });
    expect(stored).toMatchObject({ type: 'message.acked', cursor: 1 });
    expect(Object.isFrozen(stored)).toBe(true);
    expect(log.lastCursor()).toBe(1);
  });
});
