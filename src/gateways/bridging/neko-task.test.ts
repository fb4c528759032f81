import { describe, expect, it } from 'vitest';
import type { TaskRecord } from '../../tasks/task-record.js';
import { FakeChannel } from '../../../test/fakes/fake-channel.js';
import { nekoResultEnvelope, nekoTaskOf } from './neko-task.js';

const message = { id: 'm1', from: 'alice', type: 'message', body: 'run the tests', thread: 'th' };

function task(state: TaskRecord['state'], meta: Record<string, unknown>): TaskRecord {
  return {
    id: 't1',
    owner: 'neko',
    kind: 'computer_use',
    state,
    channel: 'shell',
    session: 'alice',
    params: { instruction: 'run the tests', screenshot: null },
    result: { summary: '12 passed', detail: '' },
    createdAt: 0,
    startedAt: 0,
    updatedAt: 0,
    seq: 0,
    meta,
  };
}

describe('N.E.K.O. task mapping', () => {
  it('plans a task of the channel group with the params an assessment would write', () => {
    const shell = new FakeChannel({ id: 'shell', group: 'computer_use' });
    const hook = new FakeChannel({ id: 'hook', group: 'openclaw' });
    expect(nekoTaskOf(message, shell)).toMatchObject({
      type: 'computer_use',
      params: { instruction: 'run the tests', screenshot: null },
      task: { instruction: 'run the tests', sessionKey: 'alice', conversationId: 'th' },
      meta: { method: 'bus', busReplyTo: 'alice', busMessageId: 'm1' },
    });
    expect(nekoTaskOf(message, hook)?.params).toEqual({ description: 'run the tests', attachment_count: 0 });
    expect(nekoTaskOf({ ...message, type: 'result' }, shell)).toBeNull();
  });

  it('answers once, at the first terminal state of a task started from the bus', () => {
    const meta = { busReplyTo: 'alice', busMessageId: 'm1' };
    const done = task('completed', meta);
    const reply = nekoResultEnvelope({ reason: 'finished', task: done, previous: task('running', meta) });
    expect(reply).toMatchObject({
      id: 'nr-t1',
      from: 'neko-shell',
      to: 'alice',
      type: 'result',
      thread: 'm1',
      headers: { 'x-musubi-protocol': 'neko' },
    });
    expect(JSON.parse(reply?.body ?? '')).toMatchObject({
      id: 't1',
      status: 'completed',
      lanlan_name: 'alice',
    });
    expect(nekoResultEnvelope({ reason: 'started', task: task('running', meta), previous: null })).toBeNull();
    expect(nekoResultEnvelope({ reason: 'deleted', task: done, previous: done })).toBeNull();
    expect(
      nekoResultEnvelope({ reason: 'finished', task: task('completed', {}), previous: null }),
    ).toBeNull();
  });
});
