import type { TransientBubble } from './page-state.js';
import type { TurnStore } from './turn-store.js';
import {
  agentRecord,
  transcriptEntry,
  turnSummary,
  type AgentActivity,
  type AgentsReply,
  type BusEvent,
} from '../gateways/http/api-schemas.js';

/** What one `agent.turn_*` event changed. */
export interface TurnEventEffect {
  /** The turn log changed (timeline, charts, agent drawers). */
  readonly isTurnsChanged: boolean;
  /** An agent's shown activity changed (its card). */
  readonly isAgentChanged: boolean;
  /** The turn ended: the hub's own view of the agent (spend, activity) is worth fetching. */
  readonly isFinished: boolean;
}

const NOTHING: TurnEventEffect = { isTurnsChanged: false, isAgentChanged: false, isFinished: false };

/** The activity a live transcript entry shows at once, until the agent list is fetched again. */
function activityOf(
  entry: ReturnType<typeof transcriptEntry.parse>,
  turnId: string,
): AgentActivity | undefined {
  const base = { turnId, since: entry.at };
  if (entry.kind === 'tool') return { ...base, state: 'working', detail: `${entry.name}: ${entry.summary}` };
  if (entry.kind === 'waiting') return { ...base, state: 'waiting', detail: entry.question };
  if (entry.kind === 'message' || entry.kind === 'tool_result' || entry.kind === 'started')
    return { ...base, state: 'working' };
  return undefined;
}

function setActivity(agents: AgentsReply | undefined, name: string, activity: AgentActivity): boolean {
  const list = agents?.agents;
  const index = list?.findIndex((a) => a.name === name) ?? -1;
  const agent = list?.[index];
  if (list === undefined || agent === undefined) return false;
  const known = agent.activity;
  if (known?.state === activity.state && known.detail === activity.detail) return false;
  // Keep the detail of a working agent between tool calls (a message does not name a tool).
  const detail = activity.detail ?? (activity.state === known?.state ? known.detail : undefined);
  list[index] = { ...agent, activity: { ...activity, ...(detail !== undefined && { detail }) } };
  return true;
}

/**
 * Applies an `agent.turn_started` / `agent.turn_event` / `agent.turn_finished` event to the turn log
 * and to the agent's shown activity. Events that fail the schemas change nothing.
 */
export function applyTurnEvent(
  state: { readonly turns: TurnStore; readonly agents: AgentsReply | undefined },
  event: BusEvent,
): TurnEventEffect {
  const data = event.data ?? {};
  if (event.type === 'agent.turn_started' || event.type === 'agent.turn_finished') {
    const turn = turnSummary.safeParse(data.turn);
    if (!turn.success) return NOTHING;
    const isTurnsChanged = state.turns.upsert(turn.data);
    const isStarted = event.type === 'agent.turn_started';
    const isAgentChanged =
      isStarted &&
      setActivity(state.agents, turn.data.agent, {
        state: 'working',
        turnId: turn.data.id,
        since: turn.data.startedAt,
      });
    return { isTurnsChanged, isAgentChanged, isFinished: !isStarted };
  }
  if (event.type !== 'agent.turn_event' || typeof data.turnId !== 'string') return NOTHING;
  const entry = transcriptEntry.safeParse(data.entry);
  if (!entry.success) return NOTHING;
  const isTurnsChanged = state.turns.noteEntry(data.turnId, entry.data);
  const agent = typeof data.agent === 'string' ? data.agent : state.turns.get(data.turnId)?.agent;
  const activity = activityOf(entry.data, data.turnId);
  const isAgentChanged =
    agent !== undefined && activity !== undefined && setActivity(state.agents, agent, activity);
  return { isTurnsChanged, isAgentChanged, isFinished: false };
}

/** A bubble shows at least this long, whatever the event asks. */
const BUBBLE_MIN_MS = 6_000;

/**
 * Applies another `agent.*` event: a bubble (`agent.bubble`) and, for `agent.status_changed`, the new
 * directory record at once (spend and activity stay until the refresh that follows). Resolves whether it
 * named an agent (its card is worth redrawing).
 */
export function applyAgentEvent(
  state: { readonly agents: AgentsReply | undefined; readonly bubbles: Map<string, TransientBubble> },
  event: BusEvent,
  nowMs: number,
): boolean {
  const data = event.data ?? {};
  const name =
    typeof data.agent === 'string' ? data.agent : typeof data.name === 'string' ? data.name : undefined;
  if (name === undefined) return false;
  if (event.type === 'agent.bubble' && typeof data.text === 'string') {
    const duration = typeof data.durationMs === 'number' ? data.durationMs : 0;
    state.bubbles.set(name, { text: data.text, untilMs: nowMs + Math.max(BUBBLE_MIN_MS, duration) });
  }
  const agents = state.agents?.agents;
  const index = agents?.findIndex((a) => a.name === name) ?? -1;
  const known = agents?.[index];
  const record = agentRecord.safeParse(data);
  if (
    event.type === 'agent.status_changed' &&
    agents !== undefined &&
    known !== undefined &&
    record.success
  ) {
    agents[index] = {
      ...record.data,
      spend: known.spend,
      ...(known.activity !== undefined && { activity: known.activity }),
    };
  }
  return true;
}
