import { describe, expect, it } from 'vitest';
import type { JournalRecord } from './journal-record.js';
import { JournalView } from './journal-view.js';

const envelope = {
  id: 'm',
  from: 'alice',
  to: 'bob',
  type: 'note',
  priority: 'normal' as const,
  headers: {},
  body: 'hi',
  createdAt: 0,
  attempt: 0,
};
const subject = 'p.msg.bob.m';
const sent: JournalRecord = {
  op: 'sent',
  mailbox: 'bob',
  envelope,
  attempt: 0,
  isLeased: false,
  availableAt: 0,
  at: 0,
};
const claimed: JournalRecord = {
  ...sent,
  op: 'claimed',
  attempt: 1,
  isLeased: true,
  availableAt: 1_000,
  position: 1,
};
const acked: JournalRecord = { op: 'acked', mailbox: 'bob', messageId: 'm', at: 0 };
const follower = { now: 0, isFetched: false };
const fetched = { now: 0, isFetched: true };

describe('JournalView', () => {
  it('ignores a stale fetched record after the follower passed the ack that removed the message', () => {
    const view = new JournalView();
    view.apply(subject, 1, sent, follower);
    view.apply(subject, 2, claimed, follower);
    view.apply(subject, 3, acked, follower);
    view.noteFollowed(3);
    // A direct read that started before the ack answers late with the claim.
    expect(view.apply(subject, 2, claimed, fetched)).toBeUndefined();
    expect(view.entry('bob', 'm')).toBeUndefined();
    expect(view.mailboxNames()).toEqual([]);
  });

  it('applies a fetched record the follower has not reached yet, and only moves forward', () => {
    const view = new JournalView();
    view.apply(subject, 1, sent, follower);
    view.noteFollowed(1);
    expect(view.apply(subject, 2, claimed, fetched)?.record.op).toBe('claimed');
    expect(view.apply(subject, 2, claimed, follower)).toBeUndefined();
    expect(view.apply(subject, 1, sent, follower)).toBeUndefined();
    expect(view.entry('bob', 'm')?.revision).toBe(2);
  });

  it('keeps an ack tombstone until the follower passes it', () => {
    const view = new JournalView();
    view.apply(subject, 1, sent, follower);
    view.noteFollowed(1);
    view.apply(subject, 5, acked, fetched);
    expect(view.revisionOf(subject)).toBe(5);
    expect(view.apply(subject, 2, claimed, follower)).toBeUndefined();
    view.noteFollowed(5);
    expect(view.revisionOf(subject)).toBe(0);
  });
});
