import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { createSilentLogger } from '../../core/logger.js';
import { MemoryStore } from '../../store/memory/memory-store.js';
import { SessionMemory } from './session-memory.js';
import type { TrackerRecord } from './task-tracker.js';

const record = (taskId: string, kind: TrackerRecord['kind'], ts: number): TrackerRecord => ({
  ts,
  kind,
  method: 'shell',
  desc: 'd',
  detail: '',
  taskId,
  triggerUserFingerprint: 'f',
  triggerSignature: 's',
});

describe('SessionMemory', () => {
  let clock: FakeClock;
  let store: MemoryStore;
  beforeEach(() => {
    clock = new FakeClock();
    store = new MemoryStore({ clock });
  });
  afterEach(() => store.close());
  const memory = () =>
    new SessionMemory({ kv: store, clock, logger: createSilentLogger(), prefix: 'executor/neko/sessions/' });

  it('persists fingerprints, counters and tracker records, one row per task, and loads them back', async () => {
    const first = memory();
    first.update('a b/c', (s) => ({ ...s, consumedFingerprint: 'fp', proactiveCount: 1 }));
    first.track('a b/c', record('t1', 'assigned', clock.now()));
    first.track('a b/c', record('t1', 'completed', clock.now()));
    first.track('other', record('t2', 'cancelled', clock.now()));
    await first.flush();
    expect(
      (await store.kvList('executor/neko/sessions/')).map((e) => e.key.replace(/^.*\/(turn|records)/, '$1')),
    ).toEqual(expect.arrayContaining(['turn', 'records/t1', 'records/t2']));
    const second = memory();
    await second.load();
    expect(second.get('a b/c')).toEqual({
      key: 'a b/c',
      consumedFingerprint: 'fp',
      proactiveCount: 1,
      records: [record('t1', 'completed', clock.now())],
    });
    expect(second.get('other').records.map((r) => r.kind)).toEqual(['cancelled']);
    clock.advance(601_000);
    second.track('other', record('t3', 'assigned', clock.now())); // t2 expired and its row goes
    second.resetTurns();
    await second.flush();
    const third = memory();
    await third.load();
    expect(third.get('other').records.map((r) => r.taskId)).toEqual(['t3']);
    expect(third.get('a b/c')).toMatchObject({ proactiveCount: 0 });
    expect(third.get('a b/c').consumedFingerprint).toBeUndefined();
    await third.clear();
    expect(await store.kvList('executor/neko/sessions/')).toEqual([]);
  });
});
