import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory/memory-store.js';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { RoundsTeam } from './rounds-team.js';

function team(store: MemoryStore, clock: FakeClock, members = ['a', 'b']): RoundsTeam {
  return new RoundsTeam({ kv: store, clock, teamId: 'test', members });
}
const mark = (name: string) => ({ key: `s:${name}`, label: JSON.stringify(name) });
const noop = async (): Promise<void> => undefined;

describe('RoundsTeam', () => {
  it('cycles IMPLEMENT -> TEST -> DISCUSS -> IMPLEMENT with the next round and implementer', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock });
    const t = team(store, clock);
    await t.load();
    await t.join('a');
    await t.join('b');
    expect(t.state.implementer).toBe('a');
    expect(await t.implDone('b', noop)).toEqual({ ok: false, reason: 'not-implementer', implementer: 'a' });
    const toTest = await t.implDone('a', noop);
    expect(toTest).toEqual({
      ok: true,
      change: { from: 'IMPLEMENT', to: 'TEST', round: 1, recipients: ['a', 'b'] },
    });
    expect((await t.testResult('{"passed": true}', noop)).change?.to).toBe('DISCUSS');
    expect(await t.discuss('a', (round) => `entry of round ${round}`)).toEqual({
      ok: true,
      round: 1,
      recipients: ['b'],
    });
    const first = await t.discussDone(mark('a'), 'a');
    expect(first.ok && first.change).toBeNull();
    const last = await t.discussDone(mark('b'), 'b');
    expect(last.ok && last.change).toEqual({
      from: 'DISCUSS',
      to: 'IMPLEMENT',
      round: 2,
      recipients: ['a', 'b'],
    });
    expect(t.state).toMatchObject({ round: 2, implementer: 'b', discussDone: [], testResult: null });
  });

  it('persists every change, resumes it on load and starts over on reset', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock });
    const t = team(store, clock);
    await t.load();
    await t.join('a');
    await t.setPhase('DISCUSS');
    for (let i = 0; i < 70; i++) await t.discuss('a', () => `e${i}`);
    const again = team(store, clock);
    await again.load();
    expect(again.state).toEqual(t.state);
    expect(again.discussion().map((e) => e.label)).toEqual(t.discussion().map((e) => e.label));
    expect((await store.kvList('teams/rounds/test/discussion/')).length).toBe(2);
    await again.reset();
    expect(again.state).toMatchObject({ phase: 'IMPLEMENT', round: 1, agents: [], implementer: '' });
    expect(again.discussion()).toEqual([]);
  });

  it('leaves the state unchanged when a before-commit step fails', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock });
    const t = team(store, clock);
    await t.load();
    await expect(t.implDone('x', () => Promise.reject(new Error('disk full')))).rejects.toThrow('disk full');
    expect(t.state.phase).toBe('IMPLEMENT');
    await expect(t.testResult('{}', () => Promise.reject(new Error('disk full')))).rejects.toThrow(
      'disk full',
    );
    expect(t.state.testResult).toBe('{}');
  });

  it('refuses to overwrite a change made by another writer (compare-and-set)', async () => {
    const clock = new FakeClock();
    const store = new MemoryStore({ clock });
    const one = team(store, clock);
    const two = team(store, clock);
    await one.load();
    await two.load();
    await one.join('a');
    await expect(two.join('b')).rejects.toMatchObject({ code: 'STORE_CONFLICT' });
    expect(two.state.agents.map((a) => a.name)).toEqual(['a']);
    await two.join('b');
    expect(two.state.agents.map((a) => a.name)).toEqual(['a', 'b']);
  });
});
