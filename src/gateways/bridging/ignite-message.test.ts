import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BodyFields } from '../ignite/body-fields.js';
import { igniteMessageOf } from './ignite-message.js';

const envelope = (type: string, body: string, extra: { thread?: string } = {}) => ({
  type,
  body,
  priority: 'high' as const,
  ...extra,
});

describe('igniteMessageOf', () => {
  it('keeps a body that already is a YAML mapping byte for byte', () => {
    const body = 'task_id: "t1"\ndescription: |\n  write a.txt A\n';
    expect(igniteMessageOf(envelope('task_assignment', body))).toEqual({
      type: 'task_assignment',
      priority: 'high',
      body,
    });
  });

  it('keeps a JSON result document (a YAML flow mapping) so IGNITE body fields read it', () => {
    const body = '{"type": "result", "id": "m1", "payload": {"output": "done", "summary": "done"}}';
    const message = igniteMessageOf(envelope('result', body));
    expect(message.body).toBe(body);
    expect(new BodyFields(message.body).get('output')).toBe('done');
  });

  it('turns plain text into body field message that reads back exactly', () => {
    for (const text of ['hello', 'two\nlines\n', '  indented\n\n', 'is it? "quoted" #hash', '', '- a\n- b']) {
      const message = igniteMessageOf(envelope('message', text));
      expect(parse(message.body)).toEqual({ message: text });
    }
  });

  it('writes CRLF text with LF line ends', () => {
    expect(parse(igniteMessageOf(envelope('message', 'a\r\nb\rc')).body)).toEqual({ message: 'a\nb\nc' });
  });

  it('keeps a type IGNITE cannot carry as body field type', () => {
    const message = igniteMessageOf(envelope('review/request', 'task_id: t1\n'));
    expect(message.type).toBe('message');
    expect(parse(message.body)).toEqual({ type: 'review/request', message: 'task_id: t1\n' });
  });

  it('carries the thread unless it holds a line break', () => {
    expect(igniteMessageOf(envelope('message', 'x', { thread: 'th-1' })).threadId).toBe('th-1');
    expect(igniteMessageOf(envelope('message', 'x', { thread: 'a\u2028b' }))).not.toHaveProperty('threadId');
  });
});
