import { describe, expect, it } from 'vitest';
import { CommandLocks } from './command-locks.js';

function gate(): { promise: Promise<void>; open: () => void } {
  let open: () => void = () => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('CommandLocks', () => {
  it('overlaps tasks on different mailboxes and orders tasks on the same one', async () => {
    const locks = new CommandLocks();
    const log: string[] = [];
    const a = gate();
    const first = locks.mailboxes(['a'], async () => {
      log.push('a1 start');
      await a.promise;
      log.push('a1 end');
    });
    const second = locks.mailboxes(['a'], async () => void log.push('a2'));
    const other = locks.mailboxes(['b'], async () => void log.push('b'));
    await other;
    expect(log).toEqual(['a1 start', 'b']);
    a.open();
    await Promise.all([first, second]);
    expect(log).toEqual(['a1 start', 'b', 'a1 end', 'a2']);
  });

  it('runs a state command alone, after earlier tasks and before later ones', async () => {
    const locks = new CommandLocks();
    const log: string[] = [];
    const a = gate();
    const early = locks.mailboxes(['a'], async () => {
      await a.promise;
      log.push('early');
    });
    const state = locks.exclusive(async () => void log.push('state'));
    const late = locks.mailboxes(['b'], async () => void log.push('late'));
    a.open();
    await Promise.all([early, state, late]);
    expect(log).toEqual(['early', 'state', 'late']);
  });

  it('keeps going after a task fails', async () => {
    const locks = new CommandLocks();
    await expect(locks.exclusive(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await locks.mailboxes(['a'], async () => 'ok')).toBe('ok');
  });
});
