import { describe, expect, it } from 'vitest';
import type { AgentUpdate } from '../../bus/agent-directory.js';
import { createSilentLogger } from '../../core/logger.js';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { AgentPresence } from './agent-presence.js';

function setup(): { presence: AgentPresence; writes: AgentUpdate[]; clock: FakeClock } {
  const writes: AgentUpdate[] = [];
  const clock = new FakeClock();
  const directory = {
    update: (_name: string, update: AgentUpdate): Promise<void> => {
      writes.push(update);
      return Promise.resolve();
    },
  };
  const presence = new AgentPresence({ agent: 'alice', directory, clock, logger: createSilentLogger() });
  return { presence, writes, clock };
}

describe('mcp - agent presence', () => {
  it('goes idle, waiting, busy with the message, then idle again after the ack', async () => {
    const { presence, writes } = setup();
    await presence.online();
    await presence.receiveStarted();
    await presence.receiveEnded({
      deliveryId: 'alice:m1:1:1',
      messageId: 'm1',
      leaseUntil: Date.UTC(2027, 0, 1),
    });
    await presence.settled('alice:m1:1:1');
    expect(writes).toEqual([
      { protocol: 'mcp', state: 'idle', currentTask: null },
      { state: 'waiting', currentTask: null },
      { state: 'busy', currentTask: 'm1' },
      { state: 'idle', currentTask: null },
    ]);
  });

  it('forgets a held message once its lease has ended', async () => {
    const { presence, writes, clock } = setup();
    await presence.online();
    await presence.receiveStarted();
    await presence.receiveEnded({
      deliveryId: 'alice:m1:1:1',
      messageId: 'm1',
      leaseUntil: clock.now() + 1000,
    });
    clock.advance(1000);
    await presence.receiveStarted();
    expect(writes.at(-1)).toEqual({ state: 'waiting', currentTask: null });
  });

  it('stays offline once stopped and never rejects on a failing directory', async () => {
    let calls = 0;
    const presence = new AgentPresence({
      agent: 'alice',
      directory: {
        update: () => {
          calls += 1;
          return Promise.reject(new Error('store down'));
        },
      },
      clock: new FakeClock(),
      logger: createSilentLogger(),
    });
    await expect(presence.offline()).resolves.toBeUndefined();
    await expect(presence.receiveStarted()).resolves.toBeUndefined();
    expect(calls).toBe(1);
  });
});
