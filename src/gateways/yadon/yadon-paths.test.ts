import { describe, expect, it } from 'vitest';
import { isMusubiError } from '../../core/errors.js';
import { generateTaskId, isGeneratedTaskId } from './task-id.js';
import { agentSocketPath, hostSocketPaths, resolveSocketDir, resolveWorkerCount } from './yadon-paths.js';

describe('yadon paths', () => {
  it('puts the manager socket at /tmp/yadon-agent-yadoran.sock when YADON_SOCKET_DIR is unset or empty', () => {
    expect(agentSocketPath(resolveSocketDir({}), 'yadoran')).toBe('/tmp/yadon-agent-yadoran.sock');
    expect(resolveSocketDir({ YADON_SOCKET_DIR: '' })).toBe('/tmp');
    expect(resolveSocketDir({ YADON_SOCKET_DIR: '/run/y' })).toBe('/run/y');
  });

  it('reads YADON_COUNT like Python int() and clamps it to 1..8', () => {
    const count = (v?: string) => resolveWorkerCount(v === undefined ? {} : { YADON_COUNT: v });
    expect([count(), count('0'), count('100'), count('abc'), count('3.0'), count(' 3 '), count('')]).toEqual([
      4, 1, 8, 4, 4, 3, 4,
    ]);
  });

  it('names every agent and pet socket as spec 2.1 says', () => {
    expect(hostSocketPaths('/d', 2)).toEqual([
      '/d/yadon-agent-yadoran.sock',
      '/d/yadon-agent-yadon-1.sock',
      '/d/yadon-agent-yadon-2.sock',
      '/d/yadon-pet-yadoran.sock',
      '/d/yadon-pet-1.sock',
      '/d/yadon-pet-2.sock',
    ]);
  });

  it('refuses agent names that would leave the socket directory', () => {
    for (const bad of ['../x', 'a/b', '.hidden', '']) {
      let err: unknown;
      try {
        agentSocketPath('/d', bad);
      } catch (e) {
        err = e;
      }
      expect(isMusubiError(err, 'USAGE_INVALID')).toBe(true);
    }
  });

  it('generates task ids task-YYYYMMDD-HHMMSS-xxxx in local time', () => {
    const at = new Date(2026, 1, 1, 12, 0, 5).getTime();
    expect(generateTaskId(at, () => 'a1b2')).toBe('task-20260201-120005-a1b2');
    expect(isGeneratedTaskId(generateTaskId(Date.now()))).toBe(true);
  });
});
