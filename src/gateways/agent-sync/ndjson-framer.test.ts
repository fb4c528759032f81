import { describe, expect, it } from 'vitest';
import { LINE_TOO_LONG, NdjsonFramer, type Frame } from './ndjson-framer.js';

const text = (frames: Frame[]): string[] =>
  frames.map((f) => (f === LINE_TOO_LONG ? '<too-long>' : f.toString('utf8')));

/** The frames one call to `push` (or `end` when `chunk` is undefined) completes. */
function frames(framer: NdjsonFramer, chunk?: string): Frame[] {
  const out: Frame[] = [];
  if (chunk === undefined) framer.end(out);
  else framer.push(Buffer.from(chunk), out);
  return out;
}

describe('NdjsonFramer', () => {
  it('splits lines across and within chunks and keeps a final unterminated line for end()', () => {
    const framer = new NdjsonFramer({ maxLineBytes: 10 });
    expect(text(frames(framer, 'ab\ncd'))).toEqual(['ab']);
    expect(text(frames(framer, 'ef\n\ngh'))).toEqual(['cdef', '']);
    expect(text(frames(framer))).toEqual(['gh']);
    expect(frames(framer)).toEqual([]);
  });

  it('allows exactly the limit and reports one too-long frame beyond it, then nothing more', () => {
    const framer = new NdjsonFramer({ maxLineBytes: 4 });
    expect(text(frames(framer, 'abcd\nabcde\nok\n'))).toEqual(['abcd', '<too-long>']);
    expect(frames(framer, 'more\n')).toEqual([]);
    expect(frames(framer)).toEqual([]);
  });

  it('reports an over-long line before its newline arrives', () => {
    const framer = new NdjsonFramer({ maxLineBytes: 4 });
    expect(text(frames(framer, 'abc'))).toEqual([]);
    expect(text(frames(framer, 'de'))).toEqual(['<too-long>']);
  });
});
