import { describe, expect, it } from 'vitest';
import { agentSyncTextOf } from './agent-sync-text.js';

describe('agentSyncTextOf', () => {
  it('shows sender, type and body unchanged for mail from yadon and agent_sync', () => {
    const body = '{"type": "result", "payload": {"output": "done"}}';
    expect(
      agentSyncTextOf({ from: 'yadon-1', type: 'result', body, headers: { 'x-musubi-protocol': 'yadon' } }),
    ).toEqual({ from: 'yadon-1', type: 'result', text: body });
  });

  it("shows an IGNITE file's own From and X-IGNITE-Type where the envelope had to replace them", () => {
    const headers = {
      'x-musubi-protocol': 'ignite',
      'ignite-from': '田中',
      'ignite-type': 'task.assign ment',
    };
    expect(agentSyncTextOf({ from: 'ignite', type: 'ignite.message', body: 'a: 1\n', headers })).toEqual({
      from: '田中',
      type: 'task.assign ment',
      text: 'a: 1\n',
    });
  });

  it('says so when an IGNITE body was too large for the bus', () => {
    const headers = { 'x-musubi-protocol': 'ignite', 'ignite-body-omitted': 'true' };
    const text = agentSyncTextOf({ from: 'leader', type: 'report', body: '', headers }).text;
    expect(text).toMatch(/larger than 1 MiB/);
  });
});
