import { describe, expect, it } from 'vitest';
import { AgentDirectory } from '../../bus/agent-directory.js';
import { createBus } from '../../bus/bus.js';
import { createSystemClock } from '../../core/clock.js';
import { createIdGenerator } from '../../core/ids.js';
import { createSilentLogger } from '../../core/logger.js';
import { MemoryStore } from '../../store/memory/memory-store.js';
import { attachedElsewhere } from './attachment.js';

describe('attachedElsewhere', () => {
  it('is true only for agents whose record names another protocol than self or bus', async () => {
    const clock = createSystemClock();
    const store = new MemoryStore({ clock });
    const bus = createBus({
      store,
      clock,
      ids: createIdGenerator(clock),
      logger: createSilentLogger(),
      config: { leaseMs: 1000, retry: { baseMs: 10, capMs: 10, maxAttempts: 3 } },
    });
    const directory = new AgentDirectory({ bus, clock });
    await directory.update('ignitian_2', { protocol: 'agent-sync' });
    await directory.update('leader', { protocol: 'ignite' });
    await directory.update('watcher', {});
    const isElsewhere = attachedElsewhere(directory, 'ignite');
    expect(await isElsewhere('ignitian_2')).toBe(true);
    expect(await isElsewhere('leader')).toBe(false);
    expect(await isElsewhere('watcher')).toBe(false);
    expect(await isElsewhere('never-seen')).toBe(false);
    await bus.close();
    await store.close();
  });
});
