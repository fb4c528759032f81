import type { Agent } from '../gateways/http/api-schemas.js';

// What an agent is doing, as its card, its lane and the headline say it: a word, an icon (so the
// state never rests on colour alone) and the detail (the current tool, the question). No DOM.

/** The states the page tells apart. */
export type ActivityState = 'working' | 'waiting' | 'stalled' | 'idle' | 'stopped' | 'error';

/** An agent's state for display. */
export interface ActivityView {
  readonly state: ActivityState;
  readonly label: string;
  /** A text glyph (U+FE0E asks for the text, not the emoji, form). */
  readonly icon: string;
  readonly detail?: string;
}

const VIEWS: Readonly<Record<ActivityState, { label: string; icon: string }>> = {
  working: { label: 'working', icon: '▶\uFE0E' },
  waiting: { label: 'waiting', icon: '?' },
  stalled: { label: 'stalled', icon: '⚠\uFE0E' },
  idle: { label: 'idle', icon: '○' },
  stopped: { label: 'stopped', icon: '■' },
  error: { label: 'error', icon: '✕' },
};

/** The directory's states, for agents the hub reports no activity for. */
const FROM_DIRECTORY: Readonly<Record<string, ActivityState>> = {
  busy: 'working',
  idle: 'idle',
  waiting: 'waiting',
  offline: 'stopped',
  error: 'error',
};

/** The display state of `agent`: its activity when the hub reports one, else its directory state. */
export function activityOf(agent: Pick<Agent, 'state' | 'activity' | 'currentTask'>): ActivityView {
  const activity = agent.activity;
  if (activity !== undefined) {
    const detail = activity.detail ?? (activity.state === 'working' ? agent.currentTask : undefined);
    return { state: activity.state, ...VIEWS[activity.state], ...(detail !== undefined && { detail }) };
  }
  const state = FROM_DIRECTORY[agent.state];
  if (state === undefined) return { state: 'idle', label: agent.state, icon: VIEWS.idle.icon };
  return { state, ...VIEWS[state] };
}

/** The label and icon of a state by itself (the timeline's legend). */
export function activityLabel(state: ActivityState): { readonly label: string; readonly icon: string } {
  return VIEWS[state];
}
