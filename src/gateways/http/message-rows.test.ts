import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../core/events.js';
import { foldMessageRows } from './message-rows.js';

let cursor = 0;
const at = <E extends object>(e: E): E & { cursor: number; at: number } => ({
  ...e,
  cursor: ++cursor,
  at: cursor * 10,
});
const sent = (mailbox: string, messageId: string): StoredEvent =>
  at({ type: 'message.sent' as const, mailbox, messageId, from: 'a', messageType: 't', priority: 'normal' });

describe('message rows', () => {
  it('makes one row per sent message and mailbox and moves its status along its life cycle', () => {
    const rows = foldMessageRows([
      sent('bob', 'm1'),
      sent('carol', 'm1'),
      at({ type: 'message.claimed' as const, mailbox: 'bob', messageId: 'm1', attempt: 1, leaseUntil: 0 }),
      at({ type: 'message.nacked' as const, mailbox: 'bob', messageId: 'm1', delayMs: 5 }),
      at({ type: 'message.claimed' as const, mailbox: 'bob', messageId: 'm1', attempt: 2, leaseUntil: 0 }),
      at({ type: 'message.dead_lettered' as const, mailbox: 'bob', messageId: 'm1', reason: 'x' }),
      at({ type: 'escalation' as const, mailbox: 'bob', messageId: 'm1', attempts: 2, reason: 'x' }),
      at({ type: 'message.acked' as const, mailbox: 'nobody', messageId: 'm0' }),
      at({ type: 'agent.status_changed' as const, data: {} }),
    ]);
    expect(rows.map((r) => [r.mailbox, r.status, r.attempt])).toEqual([
      ['bob', 'dead', 2],
      ['carol', 'sent', 0],
    ]);
  });

  it('marks a discarded dead letter, and starts a new row when its id is sent again', () => {
    const dead = [
      sent('bob', 'm1'),
      at({ type: 'message.claimed' as const, mailbox: 'bob', messageId: 'm1', attempt: 1, leaseUntil: 0 }),
      at({ type: 'message.dead_lettered' as const, mailbox: 'bob', messageId: 'm1', reason: 'x' }),
      at({ type: 'message.discarded' as const, mailbox: 'bob', messageId: 'm1' }),
    ];
    expect(foldMessageRows(dead).map((r) => [r.status, r.attempt])).toEqual([['discarded', 1]]);
    const again = sent('bob', 'm1');
    expect(foldMessageRows([...dead, again]).map((r) => [r.cursor, r.status])).toEqual([
      [again.cursor, 'sent'],
    ]);
  });
});
