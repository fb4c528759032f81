import { describe, expect, it } from 'vitest';
import { memoryBus } from '../../../test/fixtures/memory-bus.js';
import { isQueueFileName } from './ignite-paths.js';
import { QueueMirror } from './queue-mirror.js';

describe('QueueMirror.load', () => {
  it('takes only messages whose ignite-file header is a plain file name as mirrors', async () => {
    const { bus, store } = memoryBus();
    // Any bus client (say, an MCP agent) can set headers: a start-up move-back must never follow these.
    for (const name of ['../../../q/evil.mime', '/etc/x.mime', '..', 'ok_1.mime']) {
      await bus.send({ from: 'x', to: 'leader', type: 't', headers: { 'ignite-file': name } });
    }
    const mirror = new QueueMirror({ bus });
    expect((await mirror.load('leader')).map((m) => m.name)).toEqual(['ok_1.mime']);
    expect(mirror.has('leader', '../../../q/evil.mime')).toBe(false);
    await bus.close();
    await store.close();
  });

  it.each(['', '.', '..', 'a/b', 'a\\b', 'a\0b', 'a\nb'])('isQueueFileName refuses %j', (name) => {
    expect(isQueueFileName(name)).toBe(false);
  });
});
