/** The agents when AGENTS_LIST is unset. */
export const DEFAULT_AGENTS: readonly string[] = ['agent-a', 'agent-b'];

// Python's str.strip() whitespace (str.isspace), which differs from JS trim() at the edges.
const PY_SPACE =
  '\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const PY_STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, 'g');

/**
 * Parses AGENTS_LIST as agent_sync v6 does: split on `,`, strip whitespace, drop empty items, keep
 * duplicates and order. Unset gives `agent-a, agent-b`; set but empty gives no agents at all.
 */
export function parseAgentsList(raw: string | undefined): string[] {
  if (raw === undefined) return [...DEFAULT_AGENTS];
  return raw
    .split(',')
    .map((item) => item.replace(PY_STRIP, ''))
    .filter((item) => item.length > 0);
}
