import type { AgentActivity } from './api-schemas.js';
import type { AgentRecord } from '../../bus/agent-directory.js';
import type { TurnSummary } from '../../agents/turns/turn-record.js';

/** A running turn silent this long is `stalled`. */
export const STALLED_AFTER_MS = 120_000;

/**
 * What an agent is doing, from its newest turn (its events) and its directory record:
 * - `stopped`: the directory says offline or error, and no turn of it is running;
 * - `waiting`: its running turn's newest activity is a question (permission, answer);
 * - `stalled`: its running turn showed no sign of life for {@link STALLED_AFTER_MS};
 * - `working`: a turn is running (detail: the current tool or command, else its latest words);
 * - `idle`: otherwise (a directory state of `waiting` for mail is idle too; its detail says so).
 */
export function agentActivity(
  record: Pick<AgentRecord, 'state' | 'lastSeen'> | undefined,
  newest: TurnSummary | undefined,
  now: number,
): AgentActivity {
  if (newest?.state === 'running') {
    const base = { turnId: newest.id };
    const activity = newest.activity;
    if (activity?.kind === 'waiting')
      return { state: 'waiting', detail: activity.text, since: activity.at, ...base };
    if (now - newest.lastEventAt >= STALLED_AFTER_MS) {
      return {
        state: 'stalled',
        detail: `no output for ${Math.round((now - newest.lastEventAt) / 1000)} s`,
        since: newest.lastEventAt,
        ...base,
      };
    }
    return {
      state: 'working',
      ...(activity !== undefined && { detail: activity.text }),
      since: activity?.at ?? newest.startedAt,
      ...base,
    };
  }
  if (record?.state === 'offline' || record?.state === 'error') {
    return { state: 'stopped', detail: record.state, since: record.lastSeen };
  }
  if (record?.state === 'busy') return { state: 'working', since: record.lastSeen };
  return {
    state: 'idle',
    ...(newest?.endedAt !== undefined && { since: newest.endedAt }),
    ...(record?.state === 'waiting' && { detail: 'waiting for messages' }),
  };
}
