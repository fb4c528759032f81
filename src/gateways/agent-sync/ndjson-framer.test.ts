import { describe, expect, it } from 'vitest';
import { NdjsonFramer, type Frame } from './ndjson-framer.js';

const text = (frames: Frame[]): string[] =>
  frames.map((f) => (f.kind === 'line' ? f.bytes.toString('utf8') : '<too-long>'));

describe('NdjsonFramer', () => {
  it('splits lines across and within chunks and keeps a final unterminated line for end()', () => {
    const framer = new NdjsonFramer({ maxLineBytes: 10 });
    expect(text(framer.push(Buffer.from('ab\ncd')))).toEqual(['ab']);
    expect(text(framer.push(Buffer.from('ef\n\ngh')))).toEqual(['cdef', '']);
    expect(text(framer.end())).toEqual(['gh']);
    expect(framer.end()).toEqual([]);
  });

  it('allows exactly the limit and reports one too-long frame beyond it, then nothing more', () => {
    const framer = new NdjsonFramer({ maxLineBytes: 4 });
    expect(text(framer.push(Buffer.from('abcd\nabcde\nok\n')))).toEqual(['abcd', '<too-long>']);
    expect(framer.push(Buffer.from('more\n'))).toEqual([]);
    expect(framer.end()).toEqual([]);
  });

  it('reports an over-long line before its newline arrives', () => {
    const framer = new NdjsonFramer({ maxLineBytes: 4 });
    expect(text(framer.push(Buffer.from('abc')))).toEqual([]);
    expect(text(framer.push(Buffer.from('de')))).toEqual(['<too-long>']);
  });
});
