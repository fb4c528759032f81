import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../core/events.js';
import { foldHistory } from './message-history.js';

let cursor = 0;
const at = (t: number, event: Record<string, unknown>): StoredEvent =>
  ({ ...event, cursor: ++cursor, at: t }) as StoredEvent;
const ids = { mailbox: 'bob', messageId: 'm' };

describe('foldHistory', () => {
  it('adds a lease_expired step where a lease ran out before the next claim', () => {
    const steps = foldHistory(
      [
        at(0, { type: 'message.sent', ...ids, from: 'a', messageType: 't', priority: 'normal' }),
        at(10, { type: 'message.claimed', ...ids, attempt: 1, leaseUntil: 100 }),
        at(50, { type: 'message.lease_extended', ...ids, leaseUntil: 200 }),
        at(300, { type: 'message.claimed', ...ids, attempt: 2, leaseUntil: 400 }),
        at(350, { type: 'message.acked', ...ids }),
      ],
      1000,
    );
    expect(steps.map((s) => [s.kind, s.at])).toEqual([
      ['sent', 0],
      ['claimed', 10],
      ['lease_extended', 50],
      ['lease_expired', 200],
      ['claimed', 300],
      ['acked', 350],
    ]);
  });

  it('marks a lease still open past its time, and none that was settled', () => {
    const open = foldHistory([at(10, { type: 'message.claimed', ...ids, attempt: 1, leaseUntil: 100 })], 150);
    expect(open.map((s) => s.kind)).toEqual(['claimed', 'lease_expired']);
    const live = foldHistory([at(10, { type: 'message.claimed', ...ids, attempt: 1, leaseUntil: 100 })], 50);
    expect(live.map((s) => s.kind)).toEqual(['claimed']);
    const nacked = foldHistory(
      [
        at(10, { type: 'message.claimed', ...ids, attempt: 1, leaseUntil: 100 }),
        at(20, { type: 'message.nacked', ...ids, delayMs: 5 }),
      ],
      500,
    );
    expect(nacked.map((s) => s.kind)).toEqual(['claimed', 'nacked']);
  });
});
