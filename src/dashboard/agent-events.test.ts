import { describe, expect, it } from 'vitest';
import { applyAgentEvent, applyTurnEvent } from './agent-events.js';
import { TurnStore } from './turn-store.js';
import type { AgentsReply, BusEvent, TurnSummary } from '../gateways/http/api-schemas.js';

const turn: TurnSummary = {
  id: 't1',
  agent: 'alice',
  backend: 'claude',
  state: 'running',
  startedAt: 100,
  lastEventAt: 100,
  heartbeatAt: 100,
  prompt: 'fix it',
  promptChars: 6,
  usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
  toolCalls: 0,
  entries: 0,
};
const event = (type: string, data: Record<string, unknown>, cursor = 1): BusEvent => ({
  type,
  cursor,
  at: 100,
  data,
});

function agents(): AgentsReply {
  return {
    agents: [
      {
        name: 'alice',
        protocol: 'mcp',
        state: 'idle',
        lastSeen: 0,
        spend: { inputTokens: 0, outputTokens: 0, costUsd: 0, runs: 0 },
      },
    ],
    totals: { inputTokens: 0, outputTokens: 0, costUsd: 0, runs: 0 },
  };
}

describe('dashboard agent events', () => {
  it('adds a started turn, shows its tool call and question as the agent’s activity, and finishes it', () => {
    const state = { turns: new TurnStore(), agents: agents() };
    expect(applyTurnEvent(state, event('agent.turn_started', { turn }))).toEqual({
      isTurnsChanged: true,
      isAgentChanged: true,
      isFinished: false,
    });
    const tool = {
      n: 0,
      at: 110,
      kind: 'tool',
      name: 'Bash',
      toolKind: 'command',
      summary: 'npm test',
      input: '{}',
    };
    applyTurnEvent(state, event('agent.turn_event', { turnId: 't1', agent: 'alice', entry: tool }));
    expect(state.agents.agents[0]?.activity).toMatchObject({ state: 'working', detail: 'Bash: npm test' });
    const message = { n: 1, at: 120, kind: 'message', text: 'running the tests' };
    applyTurnEvent(state, event('agent.turn_event', { turnId: 't1', agent: 'alice', entry: message }));
    expect(state.agents.agents[0]?.activity?.detail).toBe('Bash: npm test');
    const waiting = { n: 2, at: 130, kind: 'waiting', question: 'May I push?' };
    applyTurnEvent(state, event('agent.turn_event', { turnId: 't1', agent: 'alice', entry: waiting }));
    expect(state.agents.agents[0]?.activity).toMatchObject({ state: 'waiting', detail: 'May I push?' });
    expect(state.turns.get('t1')).toMatchObject({ toolCalls: 1, entries: 3, lastEventAt: 130 });
    const done = { ...turn, state: 'succeeded', endedAt: 140, lastEventAt: 140, outcome: 'done' };
    expect(applyTurnEvent(state, event('agent.turn_finished', { turn: done })).isFinished).toBe(true);
    expect(state.turns.get('t1')?.state).toBe('succeeded');
  });

  it('ignores events that do not fit the schemas', () => {
    const state = { turns: new TurnStore(), agents: agents() };
    expect(applyTurnEvent(state, event('agent.turn_started', { turn: { id: 1 } })).isTurnsChanged).toBe(
      false,
    );
    expect(
      applyTurnEvent(state, event('agent.turn_event', { turnId: 't1', entry: { n: 'x' } })).isTurnsChanged,
    ).toBe(false);
  });

  it('shows a status change at once, keeping spend and activity, and bubbles for a while', () => {
    const state = { agents: agents(), bubbles: new Map() };
    const spend = { inputTokens: 5, outputTokens: 5, costUsd: 1, runs: 1 };
    state.agents.agents[0] = {
      ...state.agents.agents[0]!,
      spend,
      activity: { state: 'working', detail: 'Bash: ls' },
    };
    const changed = event('agent.status_changed', {
      name: 'alice',
      protocol: 'mcp',
      state: 'busy',
      lastSeen: 5,
    });
    expect(applyAgentEvent(state, changed, 1000)).toBe(true);
    expect(state.agents.agents[0]).toMatchObject({ state: 'busy', spend, activity: { detail: 'Bash: ls' } });
    applyAgentEvent(state, event('agent.bubble', { agent: 'alice', text: 'hi', durationMs: 100 }), 1000);
    expect(state.bubbles.get('alice')).toEqual({ text: 'hi', untilMs: 7000 });
    expect(applyAgentEvent(state, event('agent.bubble', { text: 'nobody' }), 1000)).toBe(false);
  });
});
