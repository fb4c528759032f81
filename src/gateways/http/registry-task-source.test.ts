import { describe, expect, it } from 'vitest';
import { memoryBus } from '../../../test/fixtures/memory-bus.js';
import { isMusubiError } from '../../core/errors.js';
import { createSilentLogger } from '../../core/logger.js';
import { TaskRegistry } from '../../tasks/task-registry.js';
import { createRegistryTaskSource } from './registry-task-source.js';

describe('registry task source', () => {
  it('shows registry rows as task views and cancels through the registry', async () => {
    const { bus, store, clock } = memoryBus();
    const registry = new TaskRegistry({ bus, clock, logger: createSilentLogger() });
    const source = createRegistryTaskSource(registry);
    const task = await registry.create({
      owner: 'neko',
      kind: 'browser_use',
      state: 'running',
      title: '調べる',
      agent: 'neko',
      params: { secret: 1 },
      meta: { m: 1 },
    });
    await registry.progress(task.id, { progress: 40, message: 'opening the page' });
    const [view] = await source.list();
    expect(view).toEqual({
      id: task.id,
      state: 'running',
      kind: 'browser_use',
      title: '調べる',
      agent: 'neko',
      progress: 0.4,
      detail: 'opening the page',
      createdAt: task.createdAt,
      startedAt: task.startedAt,
      updatedAt: expect.any(Number),
    });
    expect(await source.cancel(task.id)).toMatchObject({ state: 'cancelled', detail: 'Cancelled by user' });
    expect(await source.cancel(task.id)).toMatchObject({ state: 'cancelled' });
    const err: unknown = await source.cancel('nope').catch((e: unknown) => e);
    expect(isMusubiError(err, 'NOT_FOUND')).toBe(true);
    await registry.close();
    await bus.close();
    await store.close();
  });
});
