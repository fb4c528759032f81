import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { createBus } from '../../bus/bus.js';
import { createIdGenerator } from '../../core/ids.js';
import { createSilentLogger } from '../../core/logger.js';
import { MemoryStore } from '../../store/memory/memory-store.js';
import { RoundsTeam } from '../../teams/rounds/rounds-team.js';
import { createRoundsTeamSource } from './rounds-team-source.js';

describe('rounds team source', () => {
  it('reports every rounds team in the store with phase, round, implementer and members', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock });
    const bus = createBus({
      store,
      clock,
      ids: createIdGenerator(clock),
      logger: createSilentLogger(),
      config: { leaseMs: 1000, retry: { baseMs: 1, capMs: 1, maxAttempts: 1 } },
    });
    const source = createRoundsTeamSource(bus.kv);
    expect(await source.list()).toEqual([]);
    const team = new RoundsTeam({ kv: bus.kv, clock, teamId: 'peers', members: ['alice', 'bob'] });
    await team.load();
    await team.join('alice');
    await bus.kv.kvSet('teams/rounds/broken/state', { nonsense: true });
    expect(await source.list()).toEqual([
      expect.objectContaining({
        id: 'peers',
        pattern: 'rounds',
        phase: 'IMPLEMENT',
        round: 1,
        phases: ['IMPLEMENT', 'TEST', 'DISCUSS'],
        members: ['alice'],
      }),
    ]);
    await bus.close();
    await store.close();
  });
});
