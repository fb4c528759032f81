import { describe, expect, it } from 'vitest';
import { parseAgentRequest } from './agent-request.js';

const parse = (text: string | Uint8Array) =>
  parseAgentRequest(typeof text === 'string' ? Buffer.from(text, 'utf8') : text);

describe('agent request parsing', () => {
  it('reads a task with defaults for a missing id, payload, instruction and project_dir', () => {
    expect(
      parse('{"type": "task", "id": "t1", "payload": {"instruction": "x", "project_dir": "/p"}}\n'),
    ).toEqual({
      ok: true,
      request: { kind: 'task', id: 't1', instruction: 'x', projectDir: '/p' },
    });
    expect(parse('{"type": "task"}')).toEqual({
      ok: true,
      request: { kind: 'task', id: undefined, instruction: '', projectDir: undefined },
    });
  });

  it('answers bad input with the prefixes of spec section 5', () => {
    const message = (text: string | Uint8Array) => {
      const r = parse(text);
      return r.ok ? '' : r.message;
    };
    expect(message('')).toBe('JSONパースエラー: Expecting value: line 1 column 1 (char 0)');
    expect(message('{"type": ')).toMatch(/^JSONパースエラー: /);
    expect(message('{"type": "unknown"}')).toBe('不明なメッセージタイプ: unknown');
    expect(message('{}')).toBe('不明なメッセージタイプ: ');
    expect(message('{"type": null}')).toBe('不明なメッセージタイプ: None');
    expect(message('[1, 2]')).toBe("接続処理エラー: 'list' object has no attribute 'get'");
    expect(message(new Uint8Array([0x7b, 0xff, 0x7d]))).toMatch(/^接続処理エラー: /);
    expect(message('{"type": "task", "payload": "x"}')).toBe(
      "接続処理エラー: 'str' object has no attribute 'get'",
    );
    expect(message('{"type": "task", "payload": null}')).toMatch(/^接続処理エラー: /);
  });
});
