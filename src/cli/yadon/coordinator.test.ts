import { describe, expect, it } from 'vitest';
import { coordinatorLaunch } from './coordinator.js';

const isRoot = process.getuid?.() === 0;

describe('yadon coordinator launch', () => {
  it('gives claude the bypass flag inside a sandbox, and acceptEdits as root outside one', () => {
    const sandboxed = coordinatorLaunch({ LLM_BACKEND: 'claude', IS_SANDBOX: '1' }, '/w');
    expect(sandboxed?.args.slice(-1)).toEqual(['--dangerously-skip-permissions']);
    const plain = coordinatorLaunch({ LLM_BACKEND: 'claude' }, '/w');
    expect(plain?.args.slice(isRoot ? -2 : -1)).toEqual(
      isRoot ? ['--permission-mode', 'acceptEdits'] : ['--dangerously-skip-permissions'],
    );
  });
});
