import { expect } from 'vitest';
import { expectCode, nextWithin, take, iteratorOf, type ConformanceContext } from './conformance-context.js';

/** Key-value state: reads, writes, compare-and-set, revisions, watches. */
export function kvCases({ test, store }: ConformanceContext): void {
  test('sets, gets, lists by prefix in key order and deletes keys', async () => {
    const phase = await store().kvSet('team/a/phase', { name: 'implement', round: 1 });
    await store().kvSet('team/b/phase', 'docs');
    await store().kvSet('team/a/implementer', 'yadon-1');
    await store().kvSet('teams', [1, 2, 3]);
    expect(await store().kvGet('team/a/phase')).toEqual({
      key: 'team/a/phase',
      value: { name: 'implement', round: 1 },
      revision: phase.revision,
    });
    const listed = await store().kvList('team/a/');
    expect(listed.map((e) => [e.key, e.value])).toEqual([
      ['team/a/implementer', 'yadon-1'],
      ['team/a/phase', { name: 'implement', round: 1 }],
    ]);
    expect((await store().kvList('')).map((e) => e.key)).toEqual([
      'team/a/implementer',
      'team/a/phase',
      'team/b/phase',
      'teams',
    ]);
    await store().kvDelete('team/a/phase');
    expect(await store().kvGet('team/a/phase')).toBeNull();
    expect((await store().kvList('team/a/')).map((e) => e.key)).toEqual(['team/a/implementer']);
  });

  test('resolves null for a key never set', async () => {
    expect(await store().kvGet('missing')).toBeNull();
    expect(await store().kvList('missing')).toEqual([]);
  });

  test('keeps values as JSON, not as objects shared with the caller', async () => {
    const value = { list: [1, 2], nested: { flag: true }, text: 'ü', nothing: null };
    await store().kvSet('k', value);
    value.list.push(3);
    expect((await store().kvGet('k'))?.value).toEqual({
      list: [1, 2],
      nested: { flag: true },
      text: 'ü',
      nothing: null,
    });
  });

  test('rejects STORE_CONFLICT when expectedRevision 0 meets an existing key', async () => {
    const first = await store().kvSet('lock', 'me', { expectedRevision: 0 });
    await expectCode(() => store().kvSet('lock', 'you', { expectedRevision: 0 }), 'STORE_CONFLICT');
    await expectCode(() => store().kvDelete('lock', { expectedRevision: 0 }), 'STORE_CONFLICT');
    expect(await store().kvGet('lock')).toEqual({ key: 'lock', value: 'me', revision: first.revision });
  });

  test('rejects STORE_CONFLICT when expectedRevision is not the current revision', async () => {
    const first = await store().kvSet('k', 1);
    const second = await store().kvSet('k', 2, { expectedRevision: first.revision });
    await expectCode(() => store().kvSet('k', 3, { expectedRevision: first.revision }), 'STORE_CONFLICT');
    await expectCode(() => store().kvDelete('k', { expectedRevision: first.revision }), 'STORE_CONFLICT');
    await expectCode(
      () => store().kvSet('missing', 1, { expectedRevision: second.revision }),
      'STORE_CONFLICT',
    );
    expect((await store().kvGet('k'))?.value).toBe(2);
    expect(await store().kvGet('missing')).toBeNull();
  });

  test('writes and deletes when expectedRevision matches', async () => {
    const created = await store().kvSet('k', 'a', { expectedRevision: 0 });
    const updated = await store().kvSet('k', 'b', { expectedRevision: created.revision });
    expect(updated.value).toBe('b');
    await store().kvDelete('k', { expectedRevision: updated.revision });
    expect(await store().kvGet('k')).toBeNull();
    await store().kvDelete('k', { expectedRevision: 0 });
  });

  test('increases revisions strictly across keys, writes and deletes', async () => {
    const a1 = await store().kvSet('a', 1);
    const b1 = await store().kvSet('b', 1);
    await store().kvDelete('a');
    const a2 = await store().kvSet('a', 2);
    const b2 = await store().kvSet('b', 2);
    expect(b1.revision).toBeGreaterThan(a1.revision);
    expect(a2.revision).toBeGreaterThan(b1.revision + 1);
    expect(b2.revision).toBeGreaterThan(a2.revision);
  });

  test('treats deleting a missing key without expectedRevision as a no-op', async () => {
    const before = await store().kvSet('other', 1);
    await store().kvDelete('missing');
    const after = await store().kvSet('other', 2);
    expect(after.revision).toBeGreaterThan(before.revision);
    expect(await store().kvGet('missing')).toBeNull();
  });

  test('watches puts and deletes under a prefix in revision order and ends when aborted', async () => {
    const controller = new AbortController();
    const iterator = iteratorOf(store().kvWatch('team/', { signal: controller.signal }));
    const pending = take(iterator, 3);
    const put = await store().kvSet('team/phase', 'implement');
    await store().kvSet('other/key', 'ignored');
    await store().kvSet('team/round', 2);
    await store().kvDelete('team/phase');
    const changes = await pending;
    expect(changes.map((c) => [c.op, c.key, c.value])).toEqual([
      ['put', 'team/phase', 'implement'],
      ['put', 'team/round', 2],
      ['delete', 'team/phase', undefined],
    ]);
    expect(changes[0]?.revision).toBe(put.revision);
    expect(changes[2]?.revision).toBeGreaterThan(changes[1]?.revision ?? Infinity);
    const ending = nextWithin(iterator);
    controller.abort();
    expect((await ending).done).toBe(true);
  });

  test('replays changes after afterRevision before following new ones', async () => {
    const start = await store().kvSet('k/a', 1);
    await store().kvSet('k/b', 2);
    await store().kvDelete('k/a');
    const controller = new AbortController();
    const iterator = iteratorOf(
      store().kvWatch('k/', { signal: controller.signal, afterRevision: start.revision }),
    );
    expect((await take(iterator, 2)).map((c) => [c.op, c.key])).toEqual([
      ['put', 'k/b'],
      ['delete', 'k/a'],
    ]);
    await store().kvSet('k/c', 3);
    expect((await nextWithin(iterator)).value).toMatchObject({ op: 'put', key: 'k/c', value: 3 });
    controller.abort();
    expect((await nextWithin(iterator)).done).toBe(true);
  });

  test('ends a watch at once when its signal is already aborted', async () => {
    const iterator = iteratorOf(store().kvWatch('', { signal: AbortSignal.abort() }));
    expect((await nextWithin(iterator)).done).toBe(true);
  });
}
