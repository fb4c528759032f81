import { closeSync, openSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger, type CreateLoggerOptions } from './logger.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'musubi-logger-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Logs one dead-letter warning to a file through a logger made with `options`; returns the file. */
function logOnce(options: CreateLoggerOptions): string {
  const path = join(dir, 'log.txt');
  const fd = openSync(path, 'w');
  try {
    const logger = createLogger({ ...options, fd }).child({ component: 'bus' });
    logger.warn({ messageId: 'm-1', attempts: 3 }, 'message dead-lettered');
    logger.debug('below the level');
  } finally {
    closeSync(fd);
  }
  return readFileSync(path, 'utf8');
}

describe('logger - formats', () => {
  it('writes one JSON object per line by default, synchronously', () => {
    const lines = logOnce({}).trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({
      level: 40,
      component: 'bus',
      messageId: 'm-1',
      msg: 'message dead-lettered',
    });
  });

  it('writes one readable line per entry when the format is pretty, synchronously', () => {
    const text = logOnce({ format: 'pretty' });
    expect(text).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: bus: message dead-lettered \{"messageId":"m-1","attempts":3\}\n$/,
    );
  });

  it('colours pretty lines only when asked to', () => {
    expect(logOnce({ format: 'pretty' })).not.toContain('\u001b[');
    expect(logOnce({ format: 'pretty', isColored: true })).toContain('\u001b[');
  });
});
