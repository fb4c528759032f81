import * as zmq from 'zeromq';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentRunInput, AgentRunner } from '../../src/agents/agent-runner.js';
import { ScriptedRunner } from '../../src/agents/scripted/scripted-runner.js';
import type { NekoEvent } from '../../src/gateways/neko/neko-wire.js';
import { ZmqMainBridge } from '../../src/gateways/neko/zmq-main-bridge.js';
import { FakeChannel } from '../fakes/fake-channel.js';
import { startNeko, until, type NekoHarness } from '../fixtures/neko-harness.js';

/** The scripted assessor, counting its turns. */
class CountingRunner implements AgentRunner {
  readonly backend = 'scripted' as const;
  readonly prompts: string[] = [];
  readonly #inner = new ScriptedRunner({ env: process.env });
  run(input: AgentRunInput) {
    this.prompts.push(input.prompt);
    return this.#inner.run(input);
  }
  available() {
    return this.#inner.available();
  }
}

function parse(frame: Buffer): Record<string, unknown> {
  return JSON.parse(frame.toString('utf8')) as Record<string, unknown>;
}

const tasksOf = (h: NekoHarness) => h.registry.list({ owner: 'neko' });

describe('N.E.K.O. ZeroMQ bridge', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  const use = async (h: Promise<NekoHarness>): Promise<NekoHarness> => {
    const harness = await h;
    cleanups.push(() => harness.close());
    return harness;
  };

  it('acks a request before any other event for it and runs the chosen channel', async () => {
    const shell = new FakeChannel({
      id: 'shell',
      group: 'computer_use',
      concurrency: 'exclusive',
      description: 'runs tests and builds',
    });
    const h = await use(startNeko({ channels: [shell] }));
    let eventId = '';
    const acked = await h.main.publishAnalyzeRequest(
      's1',
      'turn_end',
      [{ role: 'user', content: 'run the tests' }],
      {
        onEventId: (id) => (eventId = id),
      },
    );
    expect(acked).toBe(true);
    const result = await h.waitFor((e) => e.event_type === 'task_result');
    const forRequest = h.events.filter((e) => e.event_type !== 'agent_status_update');
    expect(forRequest[0]).toEqual({ event_type: 'analyze_ack', lanlan_name: 's1', event_id: eventId });
    expect(result).toMatchObject({
      channel: 'computer_use',
      channel_id: 'shell',
      status: 'completed',
      result_kind: 'task_result',
    });
    for (const e of h.events) {
      expect(typeof e.event_type).toBe('string');
      expect('lanlan_name' in e).toBe(true);
    }
    expect(shell.runs).toHaveLength(1);
  });

  it('retries with the same event_id when the first ack is lost and analyses the request once', async () => {
    const main = await ZmqMainBridge.bind();
    cleanups.push(() => main.close());
    // A lossy link between the agent's PUSH and main's PULL that drops the first analyze_ack.
    const proxyIn = new zmq.Pull({ linger: 0 });
    await proxyIn.bind('tcp://127.0.0.1:*');
    const proxyOut = new zmq.Push({ linger: 0, sendTimeout: 0 });
    proxyOut.connect(`tcp://127.0.0.1:${main.ports.agentPush}`);
    const acks: string[] = [];
    const forwarding = (async () => {
      for await (const [frame] of proxyIn) {
        if (frame === undefined) continue;
        const event = parse(frame);
        const id = String(event['event_id']);
        if (event['event_type'] === 'analyze_ack' && !id.startsWith('ping')) {
          acks.push(id);
          if (acks.length === 1) continue;
        }
        await proxyOut.send(frame);
      }
    })();
    cleanups.push(async () => {
      proxyIn.close();
      proxyOut.close();
      await forwarding.catch(() => undefined);
    });
    const proxyPort = Number(/:(\d+)$/.exec(proxyIn.lastEndpoint ?? '')?.[1]);
    const assessor = new CountingRunner();
    const shell = new FakeChannel({ id: 'shell', group: 'computer_use', description: 'runs tests' });
    const h = await use(
      startNeko({
        main,
        channels: [shell],
        assessor,
        settings: { zmq: { ...main.ports, agentPush: proxyPort } },
      }),
    );
    expect(await main.waitForAgent()).toBe(true);
    const acked = await main.publishAnalyzeRequest(
      's1',
      'turn_end',
      [{ role: 'user', content: 'run the tests' }],
      {
        ackTimeoutMs: 400,
      },
    );
    expect(acked).toBe(true);
    expect(acks).toHaveLength(2);
    expect(acks[0]).toBe(acks[1]);
    expect(acks[0]).toMatch(/^[0-9a-f]{32}$/);
    await h.waitFor((e) => e.event_type === 'task_result');
    expect(await tasksOf(h)).toHaveLength(1);
    expect(assessor.prompts).toHaveLength(1);
  });

  it('acks but does nothing else while the master switch is off', async () => {
    const shell = new FakeChannel({ id: 'shell', group: 'computer_use', description: 'runs tests' });
    const assessor = new CountingRunner();
    const h = await use(startNeko({ channels: [shell], assessor, enable: false }));
    expect(await h.say('run the tests')).toBe(true);
    // A second, different turn proves the first was fully handled (the server handles frames in order).
    expect(await h.say('run the tests again')).toBe(true);
    expect(h.events.filter((e) => e.event_type !== 'analyze_ack')).toEqual([]);
    expect(await tasksOf(h)).toEqual([]);
    expect(assessor.prompts).toEqual([]);
  });

  it('analyses an analyze_request published on the session socket without acking it', async () => {
    const shell = new FakeChannel({ id: 'shell', group: 'computer_use', description: 'runs tests' });
    const h = await use(startNeko({ channels: [shell] }));
    // PUB drops messages until the subscription is through: publish until the task shows up.
    await until(async () => {
      await h.main.publishSessionEvent({
        event_type: 'analyze_request',
        trigger: 'turn_end',
        lanlan_name: 'pub-session',
        messages: [{ role: 'user', content: 'run the tests' }],
      });
      return (await tasksOf(h)).length > 0;
    });
    await h.waitFor((e) => e.event_type === 'task_result');
    expect(h.events.some((e) => e.event_type === 'analyze_ack')).toBe(false);
    expect((await tasksOf(h)).map((t) => t.session)).toEqual(['pub-session']);
  });

  it('ignores frames that are not JSON objects, and a 10 MB frame, and keeps serving', async () => {
    const shell = new FakeChannel({ id: 'shell', group: 'computer_use', description: 'runs tests' });
    const h = await use(startNeko({ channels: [shell] }));
    for (const frame of [
      'not json',
      '[1, 2]',
      '"text"',
      '{"no_event_type": 1}',
      '{"event_type": "mystery"}',
    ]) {
      expect(await h.main.sendRaw('analyze', frame)).toBe(true);
      await h.main.sendRaw('session', frame);
    }
    expect(await h.main.sendRaw('analyze', Buffer.alloc(10 * 1024 * 1024, 0x7b))).toBe(true);
    expect(await h.main.sendRaw('analyze', Buffer.from([0xff, 0xfe, 0x00]))).toBe(true);
    // messages not an array: acked, nothing else
    await h.main.sendRaw(
      'analyze',
      JSON.stringify({ event_type: 'analyze_request', event_id: 'e-bad', messages: 'x' }),
    );
    await h.waitFor((e) => e.event_type === 'analyze_ack' && e['event_id'] === 'e-bad');
    expect(await h.say('run the tests')).toBe(true);
    await h.waitFor((e) => e.event_type === 'task_result');
    expect((await h.http('GET', '/health')).status).toBe(200);
    expect(await tasksOf(h)).toHaveLength(1);
  });

  it('does not analyse a window without a user message or an unchanged user turn', async () => {
    const shell = new FakeChannel({ id: 'shell', group: 'computer_use', description: 'runs tests' });
    const assessor = new CountingRunner();
    const h = await use(startNeko({ channels: [shell], assessor }));
    await h.main.publishAnalyzeRequest('s1', 'turn_end', [{ role: 'assistant', content: 'run the tests' }]);
    expect(await h.say('run the tests')).toBe(true);
    await h.waitFor((e) => e.event_type === 'task_result');
    // The same user turn again (main's window after a result turn) is not analysed again.
    expect(await h.say('run the tests', { assistant: 'Here are the results' })).toBe(true);
    expect(await h.say('hello there?')).toBe(true);
    await until(() => assessor.prompts.length >= 2);
    expect(assessor.prompts).toHaveLength(2);
    expect(await tasksOf(h)).toHaveLength(1);
  });

  it('returns false after two unanswered attempts with one event_id, and at once when closed', async () => {
    const main = await ZmqMainBridge.bind();
    cleanups.push(() => main.close());
    const silent = new zmq.Pull({ linger: 0 });
    silent.connect(`tcp://127.0.0.1:${main.ports.analyzePush}`);
    const late = new zmq.Push({ linger: 0 });
    late.connect(`tcp://127.0.0.1:${main.ports.agentPush}`);
    cleanups.push(async () => {
      silent.close();
      late.close();
    });
    const received: Record<string, unknown>[] = [];
    const reading = (async () => {
      for await (const [frame] of silent)
        if (frame !== undefined && frame[0] === 0x7b) received.push(parse(frame));
    })().catch(() => undefined);
    await until(() => main.sendRaw('analyze', 'warm-up')); // the silent peer is connected once a send goes through
    const started = Date.now();
    expect(
      await main.publishAnalyzeRequest('s1', 'turn_end', [{ role: 'user', content: 'x' }], {
        ackTimeoutMs: 150,
      }),
    ).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    await until(() => received.length === 2);
    expect(received[0]?.['event_id']).toBe(received[1]?.['event_id']);
    // A late ack for that id changes nothing and breaks nothing.
    await late.send(
      JSON.stringify({ event_type: 'analyze_ack', lanlan_name: 's1', event_id: received[0]?.['event_id'] }),
    );
    const seen: NekoEvent[] = [];
    main.onEvent((e) => seen.push(e));
    await until(() => seen.length === 1);
    await main.close();
    expect(await main.publishAnalyzeRequest('s1', 'turn_end', [])).toBe(false);
    silent.close();
    await reading;
  });

  it('works when the agent server starts before main binds', async () => {
    const probe = await ZmqMainBridge.bind();
    const ports = probe.ports;
    await probe.close();
    const shell = new FakeChannel({ id: 'shell', group: 'computer_use', description: 'runs tests' });
    const h = await use(startNeko({ channels: [shell], settings: { zmq: ports } }));
    await h.main.close();
    const main = await ZmqMainBridge.bind({ ports });
    cleanups.push(() => main.close());
    const events: NekoEvent[] = [];
    main.onEvent((e) => events.push(e));
    expect(await main.waitForAgent()).toBe(true);
    expect(
      await main.publishAnalyzeRequest('s1', 'turn_end', [{ role: 'user', content: 'run the tests' }]),
    ).toBe(true);
    await until(() => events.some((e) => e.event_type === 'task_result'));
  });
});
