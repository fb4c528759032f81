import { MANAGER_NAME, workerName } from '../gateways/yadon/yadon-paths.js';
import { roleOf } from '../teams/org/org-roles.js';
import type { AgentIdentity } from './runner-plan.js';

/** One agent a gateway runs, with who it is for backend selection. */
export interface IdentifiedAgent {
  readonly name: string;
  readonly identity: AgentIdentity;
}

/** The yadon manager: the manager tier. */
export function yadonManager(): IdentifiedAgent {
  return { name: MANAGER_NAME, identity: { tier: 'manager' } };
}

/** yadon worker n: the worker tier, and `YADON_<n>_BACKEND`. */
export function yadonWorker(n: number): IdentifiedAgent {
  return { name: workerName(n), identity: { tier: 'worker', workerNumber: n } };
}

/** The yadon manager and workers 1..n, in that order. */
export function yadonAgents(workerCount: number): IdentifiedAgent[] {
  return [yadonManager(), ...Array.from({ length: workerCount }, (_, i) => yadonWorker(i + 1))];
}

/** An IGNITE agent is named after its role (`ignitian_3` has the role `ignitian`, `leader` is one). */
export function igniteIdentity(agent: string): AgentIdentity {
  const role = roleOf(agent);
  return role === null ? {} : { role };
}

/** A N.E.K.O. assessor or cli-agent channel runs at the manager tier (`claude` means sonnet). */
export const NEKO_IDENTITY: AgentIdentity = { tier: 'manager' };
