import { describe, expect, it } from 'vitest';
import { resultDoc } from '../yadon/result-doc.js';
import { yadonResultEnvelope, yadonTaskOf } from './yadon-task.js';

describe('yadon task mapping', () => {
  it('runs any message but a result as a task: id, body as instruction, the default project dir', () => {
    const body = 'task_id: "t1"\ndescription: |\n  write a.txt A\n';
    expect(yadonTaskOf({ id: 'm1', type: 'task_assignment', body }, '/work')).toEqual({
      id: 'm1',
      instruction: body,
      projectDir: '/work',
    });
    expect(yadonTaskOf({ id: 'm2', type: 'result', body: '{}' }, '/work')).toBeNull();
  });

  it('mails the reply document back as a result in the thread of the task, marked as from yadon', () => {
    const doc = resultDoc({
      id: 'm1',
      from: 'yadon-1',
      status: 'success',
      payload: { output: 'ok', summary: 'ok' },
    });
    expect(yadonResultEnvelope({ agent: 'yadon-1', to: 'alice', taskMessageId: 'm1', doc })).toEqual({
      from: 'yadon-1',
      to: 'alice',
      type: 'result',
      thread: 'm1',
      headers: { 'x-musubi-protocol': 'yadon' },
      body: '{"type": "result", "id": "m1", "from": "yadon-1", "status": "success", "payload": {"output": "ok", "summary": "ok"}}',
    });
  });
});
