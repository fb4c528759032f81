import { describe, expect, it } from 'vitest';
import { memoryBus } from '../../../test/fixtures/memory-bus.js';
import { RoundsTeam } from '../../teams/rounds/rounds-team.js';
import { createRoundsTeamSource } from './rounds-team-source.js';

describe('rounds team source', () => {
  it('reports every rounds team in the store with phase, round, implementer and members', async () => {
    const { bus, store, clock } = memoryBus();
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
