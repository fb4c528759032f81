import { describe, expect, it } from 'vitest';
import { memoryBus } from '../../test/fixtures/memory-bus.js';
import type { FakeClock } from '../../test/fakes/fake-clock.js';
import { isMusubiError } from '../core/errors.js';
import type { MemoryStore } from '../store/memory/memory-store.js';
import { AgentDirectory } from './agent-directory.js';

function setup(): { directory: AgentDirectory; store: MemoryStore; clock: FakeClock } {
  const { bus, store, clock } = memoryBus();
  return { directory: new AgentDirectory({ bus, clock }), store, clock };
}

describe('agent directory', () => {
  it('creates, merges and clears fields and publishes each change', async () => {
    const { directory, store, clock } = setup();
    await directory.update('worker-1', {
      protocol: 'yadon',
      state: 'busy',
      currentTask: 't-1',
      bubble: 'working',
    });
    clock.advance(5);
    const record = await directory.update('worker-1', { state: 'idle', currentTask: null });
    expect(record).toEqual({
      name: 'worker-1',
      protocol: 'yadon',
      state: 'idle',
      bubble: 'working',
      lastSeen: clock.now(),
    });
    expect(await directory.list()).toEqual([record]);
    const events = (await store.readEvents()).filter((e) => e.type === 'agent.status_changed');
    expect(events).toHaveLength(2);
  });

  it('removes an agent with an agent.removed event, and removing one it does not know does nothing', async () => {
    const { directory, store } = setup();
    await directory.update('worker-1.r1', { protocol: 'bus', role: 'worker', run: 'r1', model: 'sonnet' });
    expect(await directory.get('worker-1.r1')).toMatchObject({ run: 'r1', model: 'sonnet' });
    await directory.remove('worker-1.r1');
    await directory.remove('worker-1.r1');
    expect(await directory.list()).toEqual([]);
    const removed = (await store.readEvents()).filter((e) => e.type === 'agent.removed');
    expect(removed).toEqual([expect.objectContaining({ data: { name: 'worker-1.r1' } })]);
  });

  it('keeps every concurrent update when gateways race on one agent', async () => {
    const { directory } = setup();
    await Promise.all([
      directory.update('a', { protocol: 'ignite', role: 'leader' }),
      directory.update('a', { bubble: 'hello' }),
      directory.update('a', { backend: 'scripted' }),
    ]);
    expect(await directory.get('a')).toMatchObject({
      protocol: 'ignite',
      role: 'leader',
      bubble: 'hello',
      backend: 'scripted',
    });
  });

  it('rejects a bad agent name and cuts long bubbles', async () => {
    const { directory } = setup();
    const err: unknown = await directory.update('../x', {}).catch((e: unknown) => e);
    expect(isMusubiError(err, 'MAILBOX_NAME_INVALID')).toBe(true);
    const record = await directory.update('b', { bubble: 'x'.repeat(1000) });
    expect(record.bubble).toHaveLength(280);
  });
});
