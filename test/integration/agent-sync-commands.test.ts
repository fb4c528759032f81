import { afterEach, describe, expect, it } from 'vitest';
import { commandSession, type Reply } from '../fixtures/agent-sync-session.js';

describe('agent-sync commands', () => {
  const session = commandSession();
  const { open, req, drain } = session;
  afterEach(() => session.close());

  it('refuses every join with () when AGENTS_LIST is empty and shows a single name as a 1-tuple', async () => {
    await open([]);
    expect(await req({ cmd: 'join', agent: 'agent-a' })).toEqual({
      ok: false,
      error: 'Invalid agent name. Must be one of: ()',
    });
    session.client.destroy();
    await session.server?.close();
    await open(['solo']);
    expect((await req({ cmd: 'join', agent: 'x' }))['error']).toBe(
      "Invalid agent name. Must be one of: ('solo',)",
    );
  });

  it('makes the first joiner the implementer and keeps it on later joins', async () => {
    await open();
    expect((await req({ cmd: 'join', agent: 'agent-b' }))['implementer']).toBe('agent-b');
    expect((await req({ cmd: 'join', agent: 'agent-a' }))['implementer']).toBe('agent-b');
  });

  it('resets joined_at and drops last_heartbeat on re-join but keeps queued mail', async () => {
    await open();
    await req({ cmd: 'join', agent: 'agent-a' });
    await req({ cmd: 'heartbeat', agent: 'agent-a' });
    await req({ cmd: 'send', to: 'agent-a', text: 'kept' });
    const before = (await req({ cmd: 'status' }))['data'] as { agents: Record<string, Reply> };
    expect(before.agents['agent-a']?.['last_heartbeat']).toEqual(expect.any(Number));
    await req({ cmd: 'join', agent: 'agent-a' });
    const after = (await req({ cmd: 'status' }))['data'] as { agents: Record<string, Reply> };
    expect(after.agents['agent-a']).not.toHaveProperty('last_heartbeat');
    expect(after.agents['agent-a']?.['status']).toBe('idle');
    expect(after.agents['agent-a']?.['joined_at']).toBeGreaterThanOrEqual(
      before.agents['agent-a']?.['joined_at'] as number,
    );
    expect((await drain('agent-a')).map((m) => m['text'])).toEqual(['kept']);
  });

  it('nests status under data with the documented keys', async () => {
    await open();
    await req({ cmd: 'join', agent: 'agent-a' });
    const reply = await req({ cmd: 'status' });
    expect(Object.keys(reply)).toEqual(['ok', 'data']);
    expect(Object.keys(reply['data'] as Reply)).toEqual([
      'phase',
      'round',
      'agents',
      'implementer',
      'discuss_done',
      'test_result',
    ]);
    const agent = (reply['data'] as { agents: Record<string, Reply> }).agents['agent-a'];
    expect(Object.keys(agent ?? {})).toEqual(['status', 'joined_at', 'last_seen', 'stale']);
  });

  it('counts pending mail on peek without consuming it, 0 for unknown names, and refuses list names', async () => {
    await open();
    await req({ cmd: 'send', to: 'agent-b', text: 'one' });
    await req({ cmd: 'send', to: 'agent-b', text: 'two' });
    expect((await req({ cmd: 'peek', agent: 'agent-b' }))['pending']).toBe(2);
    expect((await req({ cmd: 'peek', agent: 'agent-b' }))['pending']).toBe(2);
    expect((await req({ cmd: 'peek', agent: 'nobody' }))['pending']).toBe(0);
    expect((await req({ cmd: 'peek' }))['pending']).toBe(0);
    expect(await req({ cmd: 'peek', agent: ['x'] })).toEqual({ ok: false, error: "unhashable type: 'list'" });
    expect(await req({ cmd: 'heartbeat', agent: { a: 1 } })).toEqual({
      ok: false,
      error: "unhashable type: 'dict'",
    });
    expect((await session.server?.bus.listMailboxes())?.map((m) => m.mailbox)).toEqual(['agent-b']);
  });

  it('validates send targets, queues for agents not yet joined and keeps from/type as given', async () => {
    await open();
    expect(await req({ cmd: 'send', to: 'agent-z', text: 'x' })).toEqual({
      ok: false,
      error: 'Unknown target: agent-z',
    });
    expect(await req({ cmd: 'send', text: 'x' })).toEqual({ ok: false, error: 'Unknown target: ' });
    expect(await req({ cmd: 'send', to: 'agent-b', text: 'plain' })).toEqual({ ok: true });
    await req({ cmd: 'send', to: 'agent-b', agent: null, text: 'null sender' });
    await req({ cmd: 'send', to: 'agent-b', agent: 'agent-a', msg_type: 'review', text: 'typed' });
    await req({ cmd: 'send', to: 'agent-b', agent: 'agent-a', msg_type: 7, text: { k: [1] } });
    await req({ cmd: 'join', agent: 'agent-b' });
    const mail = await drain('agent-b');
    expect(mail.map((m) => [m['from'], m['type'], m['text']])).toEqual([
      ['user', 'message', 'plain'],
      [null, 'message', 'null sender'],
      ['agent-a', 'review', 'typed'],
      ['agent-a', 7, { k: [1] }],
    ]);
    expect(Object.keys(mail[0] ?? {})).toEqual(['from', 'type', 'text', 'ts']);
  });

  it('broadcasts to every other joined agent without echo', async () => {
    await open(['agent-a', 'agent-b', 'agent-c']);
    for (const agent of ['agent-a', 'agent-b', 'agent-c']) await req({ cmd: 'join', agent });
    expect(await req({ cmd: 'broadcast', agent: 'agent-a', text: 'rebased' })).toEqual({ ok: true });
    expect(await drain('agent-a')).toEqual([]);
    for (const agent of ['agent-b', 'agent-c']) {
      expect((await drain(agent)).map((m) => [m['from'], m['type'], m['text']])).toEqual([
        ['agent-a', 'broadcast', 'rebased'],
      ]);
    }
  });

  it('refuses items over 61,000 bytes and enqueues nothing', async () => {
    await open();
    await req({ cmd: 'join', agent: 'agent-a' });
    await req({ cmd: 'join', agent: 'agent-b' });
    const big = 'x'.repeat(61_000);
    for (const request of [
      { cmd: 'send', to: 'agent-b', text: big },
      { cmd: 'broadcast', text: big },
      { cmd: 'say', text: big },
    ]) {
      expect(await req(request)).toEqual({ ok: false, error: 'Message too large (max 61000 bytes)' });
    }
    expect(await req({ cmd: 'test-result', output: big })).toEqual({
      ok: false,
      error: 'Test result too large (max 61000 bytes)',
    });
    expect((await req({ cmd: 'peek', agent: 'agent-b' }))['pending']).toBe(0);
    await req({ cmd: 'set-phase', phase: 'DISCUSS' });
    await drain('agent-b');
    expect(await req({ cmd: 'discuss', agent: 'agent-a', text: big })).toEqual({
      ok: false,
      error: 'Message too large (max 61000 bytes)',
    });
    expect((await req({ cmd: 'get-discussion' }))['total']).toBe(0);
  });

  it('keeps numbers as names distinct from strings, in private mailboxes that never reach the bus', async () => {
    await open();
    expect(await req({ cmd: 'say', to: 5, text: 'number' })).toEqual({ ok: true });
    expect(await req({ cmd: 'say', to: '5', text: 'string' })).toEqual({ ok: true });
    expect(await req({ cmd: 'say', to: 'with space', text: 'odd name' })).toEqual({ ok: true });
    expect((await req({ cmd: 'peek', agent: 5.0 }))['pending']).toBe(1);
    expect((await drain('5')).map((m) => m['text'])).toEqual(['string']);
    expect((await req({ cmd: 'listen', agent: 5, timeout: 0 }))['messages']).toEqual([
      expect.objectContaining({ from: 'user', type: 'say', text: 'number' }),
    ]);
    expect((await drain('with space')).map((m) => m['text'])).toEqual(['odd name']);
    expect((await session.server?.bus.listMailboxes())?.map((m) => m.mailbox)).toEqual([]);
    expect(await req({ cmd: 'say', to: ['x'], text: 'y' })).toEqual({
      ok: false,
      error: "unhashable type: 'list'",
    });
    expect(await req({ cmd: 'say', to: 'agent-a', text: 1.5 })).toEqual({
      ok: false,
      error: "'float' object is not subscriptable",
    });
    expect(await req({ cmd: 'say', to: 'agent-a', text: null })).toEqual({
      ok: false,
      error: "'NoneType' object is not subscriptable",
    });
  });
});
