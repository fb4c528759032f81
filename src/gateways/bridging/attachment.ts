import type { AgentDirectory, AgentProtocol } from '../../bus/agent-directory.js';

/**
 * Whether an agent is attached through another protocol than `self`, read from the agent directory:
 * true when its record names a protocol other than `self` and `bus` (the default of a record nobody
 * attached). A gateway that runs agents by name (IGNITE) hands such an agent's messages to its mailbox
 * instead of running them, so the gateway the agent is attached through delivers them (docs/bridging.md).
 * Rejects when the directory cannot be read.
 */
export function attachedElsewhere(
  directory: Pick<AgentDirectory, 'get'>,
  self: AgentProtocol,
): (agent: string) => Promise<boolean> {
  return async (agent) => {
    const record = await directory.get(agent);
    return record !== null && record.protocol !== self && record.protocol !== 'bus';
  };
}
