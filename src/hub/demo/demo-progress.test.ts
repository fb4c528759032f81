import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { DemoProgress, type ProgressChange } from './demo-progress.js';

function progress(): { progress: DemoProgress; changes: ProgressChange[] } {
  const changes: ProgressChange[] = [];
  return {
    progress: new DemoProgress({ clock: new FakeClock(), onChange: (c) => changes.push(c) }),
    changes,
  };
}

describe('DemoProgress', () => {
  it('counts steps to the end of a phase and tells the story through log lines', () => {
    const { progress: p, changes } = progress();
    p.start('implement', 2, 'two subtasks');
    p.advance('implement', 'yadon-1 done');
    p.advance('implement');
    p.finish('implement');
    expect(changes.map((c) => [c.view.state, c.view.done, c.view.total, c.logLine])).toEqual([
      ['running', 0, 2, 'two subtasks'],
      ['running', 1, 2, 'yadon-1 done'],
      ['running', 2, 2, undefined],
      ['done', 2, 2, undefined],
    ]);
    expect(p.views().find((v) => v.phase === 'implement')?.note).toBe('yadon-1 done');
  });

  it('ignores updates to a phase that has ended, so late reports never move a bar back', () => {
    const { progress: p, changes } = progress();
    p.fail('test', 'agent_sync refused');
    p.advance('test', 'late');
    p.note('test', 'later');
    p.finish('test');
    expect(changes).toHaveLength(1);
    expect(p.views().find((v) => v.phase === 'test')).toMatchObject({
      state: 'failed',
      note: 'agent_sync refused',
    });
  });

  it('starts a pending phase on its first step or note and names the running phase as current', () => {
    const { progress: p } = progress();
    p.note('changelog', 'attempt 1 failed');
    expect(p.current()).toBe('changelog');
    p.finish('changelog');
    expect(p.current()).toBeUndefined();
    expect(p.latest()).toBe('changelog');
    p.advance('verify');
    expect(p.views().find((v) => v.phase === 'verify')).toMatchObject({
      state: 'running',
      done: 1,
      total: 1,
    });
  });
});
