import { describe, expect, it } from 'vitest';
import { buildChildEnv } from './child-env.js';
import { OutputCapture } from './output-capture.js';

describe('OutputCapture', () => {
  it('delivers lines split across chunks, strips CR and flushes the last line on end', () => {
    const lines: string[] = [];
    const capture = new OutputCapture({ capBytes: 1024, onLine: (l) => lines.push(l) });
    for (const chunk of ['{"a":', '1}\r\n{"b"', ':2}\nlast']) capture.push(Buffer.from(chunk));
    capture.end();
    expect(lines).toEqual(['{"a":1}', '{"b":2}', 'last']);
    expect(capture.text()).toBe('{"a":1}\r\n{"b":2}\nlast');
  });

  it('keeps only the cap, counts the rest, cuts over-long lines and keeps a tail', () => {
    const lines: string[] = [];
    const capture = new OutputCapture({ capBytes: 8, onLine: (l) => lines.push(l) });
    capture.push(Buffer.from('0123456789abcdef\nok\n'));
    capture.end();
    expect(capture.text()).toBe('01234567');
    expect(capture.totalBytes).toBe(20);
    expect(capture.isTruncated).toBe(true);
    expect(lines).toEqual(['01234567', 'ok']);
    expect(capture.tail()).toBe('0123456789abcdef\nok\n');
  });
});

describe('buildChildEnv', () => {
  it('passes the allowlist, prefixes and explicit additions, and drops nested-run markers', () => {
    const env = buildChildEnv({
      source: {
        PATH: '/bin',
        HOME: '/h',
        GOOGLE_CLOUD_PROJECT: 'p',
        CLAUDECODE: '1',
        AWS_SECRET_ACCESS_KEY: 's',
        OTHER: 'x',
      },
      allow: ['GOOGLE_*', 'CLAUDECODE'],
      add: { EXTRA: 'y' },
    });
    expect(env).toEqual({ PATH: '/bin', HOME: '/h', GOOGLE_CLOUD_PROJECT: 'p', EXTRA: 'y' });
  });
});
