import { readFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { originHeaders } from '../../src/gateways/bridging/origin-protocol.js';
import { BodyFields } from '../../src/gateways/ignite/body-fields.js';
import { parseMime } from '../../src/gateways/ignite/mime/mime-parse.js';
import type { NekoEvent } from '../../src/gateways/neko/neko-wire.js';
import { FakeChannel } from '../fakes/fake-channel.js';
import { waitFor } from '../fixtures/agent-sync-harness.js';
import { startBridgingHub, type BridgingHub } from '../fixtures/bridging-hub.js';
import { expectNoLiveChildren } from '../fixtures/process-children.js';

type Json = Record<string, unknown>;

function onlyMessage(reply: Json): Json {
  const messages = reply['messages'];
  expect(messages).toHaveLength(1);
  return (Array.isArray(messages) ? messages[0] : {}) as Json;
}

const taskOf = (e: NekoEvent): Json => (e['task'] ?? {}) as Json;

describe('bridging agent_sync and IGNITE <-> N.E.K.O.', () => {
  let h: BridgingHub | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });
  afterAll(async () => {
    await expectNoLiveChildren();
  });

  it("runs an agent_sync peer's message to a N.E.K.O. channel as a task and mails the task back when it ends", async () => {
    const shell = new FakeChannel({
      id: 'shell',
      group: 'computer_use',
      concurrency: 'exclusive',
      isManual: true,
    });
    const hub = (h = await startBridgingHub({
      agents: ['alice', 'neko-shell'],
      neko: { channels: [shell] },
    }));
    expect(await hub.directory.get('neko-shell')).toMatchObject({ protocol: 'neko', role: 'computer_use' });
    await hub.ask({ cmd: 'join', agent: 'alice' });
    await hub.ask({ cmd: 'send', agent: 'alice', to: 'neko-shell', text: 'run the tests' });

    await waitFor(() => shell.runs.length === 1, 15_000);
    expect(shell.runs[0]?.task).toMatchObject({ instruction: 'run the tests', sessionKey: 'alice' });
    // Main hears about the task like any other: lanlan_name is the sender.
    await waitFor(
      () => hub.nekoEvents.some((e) => e.event_type === 'task_update' && taskOf(e)['status'] === 'running'),
      15_000,
    );
    const running = hub.nekoEvents.find(
      (e) => e.event_type === 'task_update' && taskOf(e)['status'] === 'running',
    );
    expect(running).toMatchObject({
      lanlan_name: 'alice',
      task: {
        type: 'computer_use',
        params: { instruction: 'run the tests', screenshot: null },
        channel: 'shell',
      },
    });
    shell.runs[0]?.finish({ success: true, summary: '12 passed' });

    const message = onlyMessage(await hub.ask({ cmd: 'listen', agent: 'alice', timeout: 30 }, 40_000));
    expect(message).toMatchObject({ from: 'neko-shell', type: 'result' });
    expect(JSON.parse(String(message['text']))).toMatchObject({
      id: taskOf(running ?? { event_type: '' })['id'],
      status: 'completed',
      type: 'computer_use',
      params: { instruction: 'run the tests', screenshot: null },
      result: { summary: '12 passed' },
      lanlan_name: 'alice',
    });
    await waitFor(() => hub.nekoEvents.some((e) => e.event_type === 'task_result'), 15_000);
    expect(hub.nekoEvents.find((e) => e.event_type === 'task_result')).toMatchObject({ text: '12 passed' });
  });

  it('answers with a refusal when the N.E.K.O. master switch is off, and runs nothing', async () => {
    const shell = new FakeChannel({ id: 'shell', group: 'computer_use' });
    const hub = (h = await startBridgingHub({
      agents: ['alice', 'neko-shell'],
      neko: { channels: [shell], isEnabled: false },
    }));
    await hub.ask({ cmd: 'send', agent: 'alice', to: 'neko-shell', text: 'run the tests' });
    const message = onlyMessage(await hub.ask({ cmd: 'listen', agent: 'alice', timeout: 30 }, 40_000));
    expect(JSON.parse(String(message['text']))).toEqual({
      status: 'refused',
      channel: 'shell',
      error: 'Agent master switch is off',
    });
    expect(shell.runs).toEqual([]);
  });

  it("brings a N.E.K.O. task's outcome back to an IGNITE sender as a MIME file", async () => {
    const hook = new FakeChannel({ id: 'hook', group: 'openclaw' });
    const hub = (h = await startBridgingHub({ agents: ['alice'], neko: { channels: [hook] } }));
    const delivered: string[] = [];
    hub.ignite.behaviour = (turn) => (delivered.push(readFileSync(turn.file, 'utf8')), {});
    // As with yadon, IGNITE's send tool cannot address a channel; a bus client sends for the leader.
    await hub.bus.send({
      from: 'leader',
      to: 'neko-hook',
      type: 'request',
      headers: originHeaders('ignite'),
      body: 'notify: the deploy finished',
    });

    await waitFor(() => delivered.length === 1, 20_000);
    const file = parseMime(delivered[0] ?? '');
    expect(Object.fromEntries(file.headers)).toMatchObject({
      From: 'neko-hook',
      To: 'leader',
      'X-IGNITE-Type': 'result',
    });
    const fields = new BodyFields(file.body);
    expect(fields.get('status')).toBe('completed');
    expect(fields.get('lanlan_name')).toBe('leader');
    expect(hook.runs[0]?.task.instruction).toBe('notify: the deploy finished');
  });
});
