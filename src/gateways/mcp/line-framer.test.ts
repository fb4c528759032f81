import { describe, expect, it } from 'vitest';
import { LINE_TOO_LONG, LineFramer, type LineFrame } from './line-framer.js';

const text = (frames: LineFrame[]): string[] =>
  frames.map((f) => (f === LINE_TOO_LONG ? '<too-long>' : f.toString('utf8')));

const push = (framer: LineFramer, chunk: string): string[] => text(framer.push(Buffer.from(chunk)));

describe('mcp - line framer', () => {
  it('splits lines within and across chunks, yielding empty lines and holding an unterminated one', () => {
    const framer = new LineFramer({ maxLineBytes: 10 });
    expect(push(framer, 'ab\ncd')).toEqual(['ab']);
    expect(push(framer, 'ef\n\ngh')).toEqual(['cdef', '']);
    expect(push(framer, '')).toEqual([]);
    expect(push(framer, 'i\n')).toEqual(['ghi']);
  });

  it('allows a line of exactly the limit and reports a longer one once, then frames the next line', () => {
    const framer = new LineFramer({ maxLineBytes: 4 });
    expect(push(framer, 'abcd\nabcde\nok\n')).toEqual(['abcd', '<too-long>', 'ok']);
  });

  it('reports an over-long line as soon as it passes the limit and drops the rest up to its newline', () => {
    const framer = new LineFramer({ maxLineBytes: 4 });
    expect(push(framer, 'abc')).toEqual([]);
    expect(push(framer, 'de')).toEqual(['<too-long>']);
    expect(push(framer, 'still the same line')).toEqual([]);
    expect(push(framer, 'x'.repeat(100))).toEqual([]);
    expect(push(framer, 'end\nnext\n')).toEqual(['next']);
  });

  it('reports each over-long line separately, also two in one chunk', () => {
    const framer = new LineFramer({ maxLineBytes: 2 });
    expect(push(framer, 'long\nlonger\nab\n')).toEqual(['<too-long>', '<too-long>', 'ab']);
  });

  it('counts bytes, not characters, and joins a character split across chunks', () => {
    const framer = new LineFramer({ maxLineBytes: 5 });
    const bytes = Buffer.from('é€\n');
    expect(framer.push(bytes.subarray(0, 3))).toEqual([]);
    expect(text(framer.push(bytes.subarray(3)))).toEqual(['é€']);
    expect(push(framer, 'ééé\n')).toEqual(['<too-long>']);
  });
});
