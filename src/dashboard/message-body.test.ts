import { describe, expect, it } from 'vitest';
import { classifyBody } from './message-body.js';

describe('dashboard message body', () => {
  it('reads a yadon result document as a document', () => {
    const body = JSON.stringify({
      type: 'result',
      id: 'job-1',
      from: 'yadoran',
      status: 'partial_error',
      payload: { summary: '[yadon-1] success: 実装しました', output: '=== yadon-1 ===\n実装しました' },
    });
    expect(classifyBody(body)).toEqual({
      kind: 'result',
      status: 'partial_error',
      from: 'yadoran',
      id: 'job-1',
      summary: '[yadon-1] success: 実装しました',
      output: '=== yadon-1 ===\n実装しました',
    });
    expect(classifyBody('{"type":"error","from":"yadon-2","message":"接続処理エラー"}')).toEqual({
      kind: 'error',
      from: 'yadon-2',
      message: '接続処理エラー',
    });
  });

  it('pretty-prints other JSON and keeps JSON that is cut short as text', () => {
    expect(classifyBody('{"a":1,"b":[true]}')).toEqual({
      kind: 'json',
      text: '{\n  "a": 1,\n  "b": [\n    true\n  ]\n}',
    });
    expect(classifyBody('{"a": "cut sh')).toEqual({ kind: 'text', text: '{"a": "cut sh' });
  });

  it('shows IGNITE bodies and other YAML mappings as YAML, one-line prose as text', () => {
    const yaml = 'type: task_assignment\nfrom: leader\npayload:\n  title: 実装\n';
    expect(classifyBody(yaml)).toEqual({ kind: 'yaml', text: yaml });
    expect(classifyBody('title only', { headers: { 'x-musubi-protocol': 'ignite' } }).kind).toBe('yaml');
    expect(classifyBody('Note: this is just a sentence.').kind).toBe('text');
  });

  it('shows agent_sync bodies as text even when they look like JSON or YAML', () => {
    const headers = { 'x-musubi-protocol': 'agent-sync' };
    expect(classifyBody('{"a":1}', { headers })).toEqual({ kind: 'text', text: '{"a":1}' });
    expect(classifyBody('a: 1\nb: 2', { headers }).kind).toBe('text');
    expect(classifyBody('  \n')).toEqual({ kind: 'empty' });
  });
});
