import { describe, expect, it } from 'vitest';
import { MessageLog } from './message-log.js';
import type { BusEvent, MessageRow } from '../gateways/http/api-schemas.js';

const noFilter = { agent: '', type: '', thread: '' };
const sent = (cursor: number, messageId: string, extra: Partial<BusEvent> = {}): BusEvent => ({
  type: 'message.sent',
  cursor,
  at: cursor,
  mailbox: 'bob',
  messageId,
  from: 'alice',
  messageType: 'review',
  priority: 'normal',
  ...extra,
});
const row = (cursor: number, messageId: string, extra: Partial<MessageRow> = {}): MessageRow => ({
  cursor,
  at: cursor,
  mailbox: 'bob',
  messageId,
  from: 'alice',
  type: 'review',
  priority: 'normal',
  status: 'sent',
  attempt: 0,
  ...extra,
});

describe('dashboard message log', () => {
  it('adds sent messages once, follows their status and lists newest first', () => {
    const log = new MessageLog();
    expect(log.apply(sent(1, 'm1'))).toBe(true);
    expect(log.apply(sent(1, 'm1'))).toBe(false);
    expect(log.apply(sent(2, 'm2'))).toBe(true);
    expect(
      log.apply({ type: 'message.claimed', cursor: 3, at: 3, mailbox: 'bob', messageId: 'm1', attempt: 1 }),
    ).toBe(true);
    expect(log.apply({ type: 'message.acked', cursor: 4, at: 4, mailbox: 'bob', messageId: 'unknown' })).toBe(
      false,
    );
    expect(log.list(noFilter).map((r) => [r.messageId, r.status, r.attempt])).toEqual([
      ['m2', 'sent', 0],
      ['m1', 'claimed', 1],
    ]);
  });

  it('fills in thread and preview from the gateway without moving a status back', () => {
    const log = new MessageLog();
    log.apply(sent(1, 'm1'));
    log.apply({ type: 'message.acked', cursor: 2, at: 2, mailbox: 'bob', messageId: 'm1' });
    log.merge([row(1, 'm1', { status: 'sent', thread: 'pr-7', bodyPreview: 'レビュー' }), row(5, 'm5')]);
    expect(log.list(noFilter)).toEqual([
      row(5, 'm5'),
      expect.objectContaining({ messageId: 'm1', status: 'acked', thread: 'pr-7', bodyPreview: 'レビュー' }),
    ]);
  });

  it('shows discarded, and a message re-sent under a discarded id as a new row', () => {
    const log = new MessageLog();
    log.apply(sent(1, 'm1'));
    log.apply({ type: 'message.dead_lettered', cursor: 2, at: 2, mailbox: 'bob', messageId: 'm1' });
    expect(log.apply({ type: 'message.discarded', cursor: 3, at: 3, mailbox: 'bob', messageId: 'm1' })).toBe(
      true,
    );
    expect(log.list(noFilter).map((r) => [r.messageId, r.status])).toEqual([['m1', 'discarded']]);
    log.merge([row(1, 'm1', { status: 'discarded' })]);
    expect(log.apply(sent(1, 'm1'))).toBe(false);
    expect(log.apply(sent(4, 'm1', { messageType: 'retry-by-hand' }))).toBe(true);
    expect(log.list(noFilter)).toEqual([row(4, 'm1', { type: 'retry-by-hand' })]);
    log.merge([row(6, 'm1', { bodyPreview: 'third' })]);
    expect(log.list(noFilter)).toEqual([row(6, 'm1', { bodyPreview: 'third' })]);
  });

  it('filters by agent (either end), type and thread, case-insensitively', () => {
    const log = new MessageLog();
    log.merge([
      row(1, 'a', { from: 'Alice', mailbox: 'bob', thread: 'T-1' }),
      row(2, 'b', { from: 'carol', mailbox: 'dave', type: 'note' }),
    ]);
    expect(log.list({ ...noFilter, agent: 'BOB' }).map((r) => r.messageId)).toEqual(['a']);
    expect(log.list({ ...noFilter, type: 'not' }).map((r) => r.messageId)).toEqual(['b']);
    expect(log.list({ ...noFilter, thread: 't-1' }).map((r) => r.messageId)).toEqual(['a']);
  });

  it('keeps only the newest rows up to its capacity', () => {
    const log = new MessageLog(3);
    for (let i = 1; i <= 5; i++) log.apply(sent(i, `m${i}`));
    expect(log.size).toBe(3);
    expect(log.list(noFilter).map((r) => r.messageId)).toEqual(['m5', 'm4', 'm3']);
  });

  it('takes thread and preview from live sends and marks retried and dead-lettered messages', () => {
    const log = new MessageLog();
    log.apply(sent(1, 'm1', { thread: 'pr-7', bodyPreview: 'please review' }));
    const event = (type: string, cursor: number, attempt?: number): BusEvent => ({
      type,
      cursor,
      at: cursor,
      mailbox: 'bob',
      messageId: 'm1',
      ...(attempt !== undefined && { attempt }),
    });
    log.apply(event('message.claimed', 2, 1));
    expect(log.list(noFilter)[0]).toMatchObject({ thread: 'pr-7', bodyPreview: 'please review' });
    expect(log.list(noFilter)[0]?.retries).toBeUndefined();
    log.apply(event('message.nacked', 3));
    log.apply(event('message.claimed', 4, 2));
    log.apply(event('message.dead_lettered', 5));
    log.apply(event('message.requeued', 6));
    log.apply(event('message.claimed', 7, 1));
    log.apply(event('message.acked', 8));
    expect(log.list(noFilter)[0]).toMatchObject({ status: 'acked', retries: 2, wasDead: true });
    log.merge([row(1, 'm1', { retries: 1, wasDead: false })]);
    expect(log.list(noFilter)[0]).toMatchObject({ retries: 2, wasDead: true });
  });

  it('answers the same list while nothing changed and a new one after a change', () => {
    const log = new MessageLog();
    log.apply(sent(1, 'm1'));
    const first = log.list(noFilter);
    expect(log.list(noFilter)).toBe(first);
    log.apply(sent(2, 'm2'));
    expect(log.list(noFilter)).not.toBe(first);
    expect(log.list(noFilter).map((r) => r.messageId)).toEqual(['m2', 'm1']);
  });

  it('holds ten thousand rows by default and stays near its capacity under a flood', () => {
    const log = new MessageLog();
    for (let i = 1; i <= 12_000; i++) log.apply(sent(i, `m${i}`));
    expect(log.size).toBeLessThanOrEqual(10_500);
    expect(log.size).toBeGreaterThanOrEqual(10_000);
    expect(log.list(noFilter)[0]?.messageId).toBe('m12000');
  });
});
