import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import type { JournalRecord } from './journal-record.js';
import { JournalView } from './journal-view.js';
import { OwnWrites, type FollowedMessage } from './own-writes.js';

const subject = 'p.msg.bob.m';
const envelope = {
  id: 'm',
  from: 'alice',
  to: 'bob',
  type: 'note',
  priority: 'normal' as const,
  headers: {},
  body: '',
  createdAt: 0,
  attempt: 0,
};
const sent: JournalRecord = {
  op: 'sent',
  mailbox: 'bob',
  envelope,
  attempt: 0,
  isLeased: false,
  availableAt: 0,
  at: 0,
};

function setup() {
  const view = new JournalView();
  const followed: number[] = [];
  const own = new OwnWrites<FollowedMessage>({
    view,
    clock: new FakeClock(),
    applyFollowed: (msg) => followed.push(msg.seq),
  });
  return { view, own, followed };
}

describe('OwnWrites', () => {
  it('applies the held copy of its own record from the object in hand, not through the follower', () => {
    const { view, own, followed } = setup();
    own.begin(subject);
    own.deliver({ subject, seq: 1 });
    expect(view.followedSeq).toBe(0);
    expect(own.end(subject, { seq: 1, record: sent })).toBe(true);
    expect(followed).toEqual([]);
    expect(view.entry('bob', 'm')?.revision).toBe(1);
    expect(view.followedSeq).toBe(1);
  });

  it('passes other records of a subject being written to the follower path in order', () => {
    const { view, own, followed } = setup();
    own.begin(subject);
    own.deliver({ subject, seq: 4 });
    own.deliver({ subject: 'p.msg.bob.other', seq: 5 });
    expect(followed).toEqual([5]);
    expect(view.followedSeq).toBe(3);
    expect(own.end(subject, null)).toBe(false);
    expect(followed).toEqual([5, 4]);
    expect(view.followedSeq).toBe(5);
  });

  it('leaves a record the follower has not delivered yet to the caller', () => {
    const { own, followed } = setup();
    own.begin(subject);
    expect(own.end(subject, { seq: 9, record: sent })).toBe(false);
    own.deliver({ subject, seq: 9 });
    expect(followed).toEqual([9]);
  });
});
