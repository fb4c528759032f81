import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { agentSocketPath } from '../../src/gateways/yadon/yadon-paths.js';
import { startBridgingHub, type BridgingHub } from '../fixtures/bridging-hub.js';
import { expectNoLiveChildren } from '../fixtures/process-children.js';
import { ask as askSocket } from '../fixtures/yadon-harness.js';

type Json = Record<string, unknown>;

/** The one result message an agent_sync listen returned, with its text parsed as the yadon document. */
function resultOf(reply: Json): { readonly message: Json; readonly doc: Json } {
  const messages = reply['messages'];
  expect(messages).toHaveLength(1);
  const message = (Array.isArray(messages) ? messages[0] : undefined) as Json;
  return { message, doc: JSON.parse(String(message['text'])) as Json };
}

describe('bridging agent_sync <-> yadon', () => {
  let h: BridgingHub | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });
  afterAll(async () => {
    await expectNoLiveChildren();
  });

  it('runs a message sent through agent_sync to a yadon worker and mails the result to the sender', async () => {
    const hub = (h = await startBridgingHub({ agents: ['alice', 'yadon-1'] }));
    await hub.ask({ cmd: 'join', agent: 'alice' });
    const text = 'Please greet.\nwrite hello.txt hi\nreply done';
    expect(await hub.ask({ cmd: 'send', agent: 'alice', to: 'yadon-1', text })).toMatchObject({ ok: true });

    const { message, doc } = resultOf(await hub.ask({ cmd: 'listen', agent: 'alice', timeout: 30 }, 40_000));
    expect(message).toMatchObject({ from: 'yadon-1', type: 'result' });
    expect(doc).toEqual({
      type: 'result',
      id: expect.any(String),
      from: 'yadon-1',
      status: 'success',
      payload: { output: 'done', summary: 'done' },
    });
    expect(await readFile(join(hub.projectDir, 'hello.txt'), 'utf8')).toBe('hi\n');
    // The bridged task is a yadon task like any other: its socket answers get_result with the same document.
    const stored = await askSocket(agentSocketPath(hub.socketDir, 'yadon-1'), {
      type: 'get_result',
      from: 'test',
      id: doc['id'],
    });
    expect(stored).toEqual(doc);
  });

  it('runs a job sent through agent_sync to the yadon manager in three phases and mails the result back', async () => {
    const hub = (h = await startBridgingHub({ agents: ['alice', 'yadoran'], yadonWorkers: 2 }));
    const text = '- write a.txt A\n- write b.txt B';
    await hub.ask({ cmd: 'send', agent: 'alice', to: 'yadoran', msg_type: 'task', text });

    const { message, doc } = resultOf(await hub.ask({ cmd: 'listen', agent: 'alice', timeout: 60 }, 70_000));
    expect(message).toMatchObject({ from: 'yadoran', type: 'result' });
    expect(doc).toMatchObject({ type: 'result', from: 'yadoran', status: 'success' });
    expect(await readFile(join(hub.projectDir, 'a.txt'), 'utf8')).toBe('A\n');
    expect(await readFile(join(hub.projectDir, 'b.txt'), 'utf8')).toBe('B\n');
  });

  it('never runs a result as a task: a reply sent to a yadon worker is dropped, not answered', async () => {
    const hub = (h = await startBridgingHub({ agents: ['alice', 'yadon-1'] }));
    await hub.ask({
      cmd: 'send',
      agent: 'alice',
      to: 'yadon-1',
      msg_type: 'result',
      text: 'write loop.txt x',
    });
    await hub.ask({ cmd: 'send', agent: 'alice', to: 'yadon-1', text: 'reply second' });
    const { doc } = resultOf(await hub.ask({ cmd: 'listen', agent: 'alice', timeout: 30 }, 40_000));
    expect(doc).toMatchObject({ payload: { output: 'second' } });
    await expect(readFile(join(hub.projectDir, 'loop.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
