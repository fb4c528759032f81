import type { AgentRunner } from '../agents/agent-runner.js';
import { runnerTurn } from '../agents/agent-turn.js';
import type { Logger } from '../core/logger.js';
import { ThreePhaseTeam, type ThreePhaseTeamFactory } from '../teams/three-phase/three-phase-team.js';

/**
 * The hub's three-phase teams: the manager's turns run on `managerRunner` (from the hub's one runner
 * factory); the wiring — workers, prompt wording, reporting — comes from whoever drives the team.
 */
export function threePhaseTeams(managerRunner: AgentRunner, logger: Logger): ThreePhaseTeamFactory {
  const manager = runnerTurn(managerRunner);
  return (wiring) => new ThreePhaseTeam({ ...wiring, manager, logger });
}
