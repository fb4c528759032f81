import type { KvState } from '../../bus/bus.types.js';
import { PHASES, roundsStateSchema } from '../../teams/rounds/rounds-state.js';
import type { TeamSource, TeamView } from './http-ports.js';

const PREFIX = 'teams/rounds/';
const STATE_SUFFIX = '/state';
const CYCLE = PHASES.filter((p) => p !== 'SHUTDOWN');

/**
 * A TeamSource for every `rounds` team (agent_sync) in the store: it reads the teams' own state rows
 * (`teams/rounds/<id>/state`), so it sees teams of any gateway or process on the same store. Rows that
 * fail the rounds schema are left out.
 */
export function createRoundsTeamSource(kv: Pick<KvState, 'kvList'>): TeamSource {
  return {
    async list(): Promise<TeamView[]> {
      const entries = await kv.kvList(PREFIX);
      return entries.flatMap((entry) => {
        if (!entry.key.endsWith(STATE_SUFFIX)) return [];
        const id = entry.key.slice(PREFIX.length, -STATE_SUFFIX.length);
        const state = roundsStateSchema.safeParse(entry.value);
        if (id === '' || id.includes('/') || !state.success) return [];
        const { phase, round, implementer, agents } = state.data;
        return [
          {
            id,
            pattern: 'rounds',
            phase,
            round,
            phases: phase === 'SHUTDOWN' ? [...CYCLE, 'SHUTDOWN'] : [...CYCLE],
            members: agents.map((a) => a.name),
            ...(implementer === '' ? {} : { implementer }),
          },
        ];
      });
    },
  };
}
