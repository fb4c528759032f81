import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { createBus } from '../../bus/bus.js';
import type { Bus } from '../../bus/bus.types.js';
import { createIdGenerator } from '../../core/ids.js';
import { createSilentLogger } from '../../core/logger.js';
import { MemoryStore } from '../../store/memory/memory-store.js';
import { TaskRegistry } from '../../tasks/task-registry.js';
import { ExecutorTeam } from '../../teams/executor/executor-team.js';
import { buildNekoHttpApp } from './neko-http.js';

describe('N.E.K.O. HTTP API before start-up', () => {
  let store: MemoryStore;
  let bus: Bus;
  let registry: TaskRegistry;

  beforeEach(() => {
    const clock = new FakeClock();
    store = new MemoryStore({ clock });
    bus = createBus({
      store,
      clock,
      ids: createIdGenerator(clock),
      logger: createSilentLogger(),
      config: { leaseMs: 30_000, retry: { baseMs: 5_000, capMs: 300_000, maxAttempts: 3 } },
    });
    registry = new TaskRegistry({ bus, clock, logger: createSilentLogger() });
  });
  afterEach(async () => {
    await registry.close();
    await bus.close();
    await store.close();
  });

  it('answers 503 Task executor not ready on /agent/state and /plugin/execute until the executor started', async () => {
    const clock = new FakeClock();
    const events = {
      taskChanged: () => undefined,
      taskResult: () => undefined,
      notification: () => undefined,
      stateChanged: () => undefined,
    };
    const executor = new ExecutorTeam({
      registry,
      kv: bus.kv,
      clock,
      logger: createSilentLogger(),
      channels: [],
      llm: null,
      events,
    });
    const app = buildNekoHttpApp(
      {
        instanceId: 'i',
        executor,
        registry,
        clock,
        snapshot: () => Promise.resolve({}),
        emitStatus: () => Promise.resolve(),
        reloadConfig: () => Promise.resolve(''),
      },
      createSilentLogger(),
    );
    const state = await app.inject({ method: 'GET', url: '/agent/state' });
    expect([state.statusCode, state.json()]).toEqual([503, { detail: 'Task executor not ready' }]);
    const exec = await app.inject({ method: 'POST', url: '/plugin/execute', payload: { plugin_id: 'x' } });
    expect([exec.statusCode, exec.json()]).toEqual([503, { detail: 'Task executor not ready' }]);
    await executor.start();
    expect((await app.inject({ method: 'GET', url: '/agent/state' })).statusCode).toBe(200);
    await executor.stop();
    await app.close();
  });
});
