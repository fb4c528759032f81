import { describe, expect, it } from 'vitest';
import { activityOf } from './agent-activity.js';
import { headlineCounts } from './headline-counts.js';
import type { Agent } from '../gateways/http/api-schemas.js';

const spend = { inputTokens: 0, outputTokens: 0, costUsd: 0, runs: 0 };
const agent = (name: string, extra: Partial<Agent> = {}): Agent => ({
  name,
  protocol: 'agent-sync',
  state: 'idle',
  lastSeen: 0,
  spend,
  ...extra,
});

describe('dashboard agent states and headline', () => {
  it('prefers the hub’s activity and falls back to the directory state, always with a label and icon', () => {
    expect(activityOf(agent('a', { activity: { state: 'working', detail: 'Bash: npm test' } }))).toEqual({
      state: 'working',
      label: 'working',
      icon: '▶\uFE0E',
      detail: 'Bash: npm test',
    });
    expect(activityOf(agent('a', { activity: { state: 'waiting', detail: 'Allow edit?' } })).detail).toBe(
      'Allow edit?',
    );
    expect(activityOf(agent('a', { state: 'busy', currentTask: 'x' })).state).toBe('working');
    expect(activityOf(agent('a', { state: 'offline' })).label).toBe('stopped');
    expect(activityOf(agent('a', { state: 'sleeping' }))).toMatchObject({ state: 'idle', label: 'sleeping' });
  });

  it('words the counters so they say what they count', () => {
    const counts = headlineCounts({
      agents: {
        agents: [agent('a', { activity: { state: 'working' } }), agent('b'), agent('c', { state: 'busy' })],
        totals: { inputTokens: 1000, outputTokens: 250, costUsd: 0.5, runs: 3 },
      },
      mailboxes: [{ mailbox: 'a', ready: 1, delayed: 0, leased: 2, total: 3, deadLetters: 1 }],
      tasks: undefined,
    });
    expect(counts.map((c) => `${c.value} ${c.label}`)).toEqual([
      '2 of 3 agents working',
      '1 message queued',
      '2 being handled',
      '1 dead letter',
      '0 tasks running',
      '1.25k tokens used',
      '$0.50 spent',
    ]);
    expect(headlineCounts({ agents: undefined, mailboxes: [], tasks: undefined })[0]).toMatchObject({
      value: '0',
      label: 'agents connected',
    });
  });
});
