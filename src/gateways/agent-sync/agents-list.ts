import { pyStrip } from '../../core/python/text.js';

/** The agents when AGENTS_LIST is unset. */
export const DEFAULT_AGENTS: readonly string[] = ['agent-a', 'agent-b'];

/**
 * Parses AGENTS_LIST as agent_sync v6 does: split on `,`, strip whitespace, drop empty items, keep
 * duplicates and order. Unset gives `agent-a, agent-b`; set but empty gives no agents at all.
 */
export function parseAgentsList(raw: string | undefined): string[] {
  if (raw === undefined) return [...DEFAULT_AGENTS];
  return raw
    .split(',')
    .map((item) => pyStrip(item))
    .filter((item) => item.length > 0);
}
