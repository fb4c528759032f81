import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LineClient, startServer, type TestServer } from '../fixtures/agent-sync-harness.js';

type Reply = Record<string, unknown>;
const messagesOf = (reply: Reply): Array<Record<string, unknown>> =>
  (reply['messages'] ?? []) as Array<Record<string, unknown>>;

describe('agent-sync commands', () => {
  let server: TestServer | undefined;
  let client: LineClient;
  const open = async (agents?: string[]): Promise<LineClient> => {
    server = await startServer(agents === undefined ? {} : { agents });
    client = await LineClient.open(server.port);
    return client;
  };
  const req = (request: Reply): Promise<Reply> => client.request(request);
  const drain = (agent: string): Promise<Array<Record<string, unknown>>> =>
    req({ cmd: 'listen', agent, timeout: 0 }).then(messagesOf);
  afterEach(async () => {
    client?.destroy();
    await server?.close();
    server = undefined;
  });

  it('refuses every join with () when AGENTS_LIST is empty and shows a single name as a 1-tuple', async () => {
    await open([]);
    expect(await req({ cmd: 'join', agent: 'agent-a' })).toEqual({
      ok: false,
      error: 'Invalid agent name. Must be one of: ()',
    });
    client.destroy();
    await server?.close();
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
    expect((await server?.bus.listMailboxes())?.map((m) => m.mailbox)).toEqual(['agent-b']);
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

  it('enforces the IMPLEMENT phase and the implementer on impl-done, then moves to TEST', async () => {
    await open();
    await req({ cmd: 'join', agent: 'agent-a' });
    await req({ cmd: 'join', agent: 'agent-b' });
    expect(await req({ cmd: 'impl-done', agent: 'agent-b' })).toEqual({
      ok: false,
      error: 'Only the implementer (agent-a) can call impl-done',
    });
    expect(await req({ cmd: 'impl-done', agent: 'agent-a', summary: 'X' })).toEqual({
      ok: true,
      phase: 'TEST',
    });
    for (const agent of ['agent-a', 'agent-b']) {
      expect((await drain(agent)).map((m) => [m['from'], m['type'], m['text']])).toEqual([
        ['__server__', 'phase_change', 'Phase changed: IMPLEMENT -> TEST (round 1)'],
      ]);
    }
    expect(await req({ cmd: 'impl-done', agent: 'agent-a' })).toEqual({
      ok: false,
      error: 'Not in IMPLEMENT phase (current: TEST)',
    });
  });

  it('accepts impl-done from any name while there is no implementer', async () => {
    await open();
    expect(await req({ cmd: 'impl-done', agent: 42 })).toEqual({ ok: true, phase: 'TEST' });
    const log = await readFile(join(server?.cwd ?? '', 'logs/v6/round_1.md'), 'utf8');
    expect(log).toMatch(/^\n## IMPL_DONE \/ 42 — \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00\n\n\n$/);
  });

  it('stores test results in any phase and only moves TEST to DISCUSS', async () => {
    await open();
    await req({ cmd: 'join', agent: 'agent-a' });
    expect(await req({ cmd: 'test-result', agent: 'agent-b', passed: 'yes', output: 'early' })).toEqual({
      ok: true,
      passed: 'yes',
    });
    let data = (await req({ cmd: 'status' }))['data'] as Reply;
    expect(data['phase']).toBe('IMPLEMENT');
    expect(data['test_result']).toMatchObject({
      agent: 'agent-b',
      passed: 'yes',
      output: 'early',
      failures: [],
    });
    await req({ cmd: 'impl-done', agent: 'agent-a' });
    expect(await req({ cmd: 'test-result', agent: 'agent-b', passed: true, output: '12 passed' })).toEqual({
      ok: true,
      passed: true,
    });
    data = (await req({ cmd: 'status' }))['data'] as Reply;
    expect(data['phase']).toBe('DISCUSS');
    const log = await readFile(join(server?.cwd ?? '', 'logs/v6/round_1.md'), 'utf8');
    expect(log).toContain('\n\npassed=True\n\n12 passed\n');
    expect(log).toContain('\n\npassed=yes\n\nearly\n');
  });

  it('runs the DISCUSS phase: entries, forwarding, done marks and the round transition', async () => {
    await open();
    expect(await req({ cmd: 'discuss', agent: 'agent-a', text: 'x' })).toEqual({
      ok: false,
      error: 'Not in DISCUSS phase (current: IMPLEMENT)',
    });
    expect(await req({ cmd: 'discuss-done', agent: 'agent-a' })).toEqual({
      ok: false,
      error: 'Not in DISCUSS phase (current: IMPLEMENT)',
    });
    await req({ cmd: 'join', agent: 'agent-a' });
    await req({ cmd: 'join', agent: 'agent-b' });
    await req({ cmd: 'impl-done', agent: 'agent-a' });
    await req({ cmd: 'test-result', agent: 'agent-b', passed: false });
    await drain('agent-a');
    await drain('agent-b');
    expect(await req({ cmd: 'discuss', agent: 'agent-a', text: 'next: tests' })).toEqual({
      ok: true,
      round: 1,
    });
    expect((await drain('agent-b')).map((m) => [m['from'], m['type'], m['text']])).toEqual([
      ['agent-a', 'discuss', 'next: tests'],
    ]);
    expect(await drain('agent-a')).toEqual([]);
    expect(await req({ cmd: 'discuss-done', agent: 'agent-a', next_implementer: 'agent-a' })).toEqual({
      ok: true,
      discuss_done: ['agent-a'],
      round: 1,
      implementer: 'agent-a',
    });
    expect(await req({ cmd: 'discuss-done', agent: 'agent-b', next_implementer: 'agent-b' })).toEqual({
      ok: true,
      discuss_done: [],
      round: 2,
      implementer: 'agent-b',
    });
    const data = (await req({ cmd: 'status' }))['data'] as Reply;
    expect(data['test_result']).toBeNull();
    expect((await drain('agent-a')).map((m) => m['text'])).toEqual([
      'Phase changed: DISCUSS -> IMPLEMENT (round 2)',
    ]);
    expect(await req({ cmd: 'get-discussion', round: '1' })).toEqual({
      ok: true,
      discussion: [],
      total: 0,
      next_offset: null,
    });
    const round1 = await req({ cmd: 'get-discussion', round: 1 });
    expect(round1).toMatchObject({ ok: true, total: 1, next_offset: null });
    expect((round1['discussion'] as Reply[])[0]).toMatchObject({
      agent: 'agent-a',
      text: 'next: tests',
      round: 1,
    });
    expect((await req({ cmd: 'get-discussion', round: true }))['total']).toBe(1);
    expect((await req({ cmd: 'get-discussion', round: 0 }))['total']).toBe(0);
    expect(await req({ cmd: 'get-discussion', offset: -1 })).toEqual({ ok: false, error: 'Invalid offset' });
    expect(await req({ cmd: 'get-discussion', limit: 0 })).toEqual({ ok: false, error: 'Invalid limit' });
  });

  it('counts configured names, not live agents, and counts spoofed names', async () => {
    await open(['agent-a', 'agent-b', 'agent-c']);
    await req({ cmd: 'join', agent: 'agent-a' });
    await req({ cmd: 'join', agent: 'agent-b' });
    await req({ cmd: 'set-phase', phase: 'DISCUSS' });
    await req({ cmd: 'discuss-done', agent: 'agent-a' });
    expect((await req({ cmd: 'discuss-done', agent: 'agent-b' }))['round']).toBe(1);
    expect(await req({ cmd: 'discuss-done', agent: 'ghost', next_implementer: 'agent-c' })).toEqual({
      ok: true,
      discuss_done: [],
      round: 2,
      implementer: 'agent-c',
    });
  });

  it('implements say, write-log, set-phase, shutdown and heartbeat as specified', async () => {
    await open();
    await req({ cmd: 'join', agent: 'agent-a' });
    await req({ cmd: 'join', agent: 'agent-b' });
    expect(await req({ cmd: 'say', text: 'stop' })).toEqual({ ok: true });
    expect(await req({ cmd: 'say', text: 'psst', to: 'never-joined' })).toEqual({ ok: true });
    expect(await req({ cmd: 'say', text: 5, to: 'agent-b' })).toEqual({
      ok: false,
      error: "'int' object is not subscriptable",
    });
    expect((await drain('agent-a')).map((m) => [m['from'], m['type'], m['text']])).toEqual([
      ['user', 'say', 'stop'],
    ]);
    expect((await drain('agent-b')).map((m) => m['text'])).toEqual(['stop', 5]);
    expect((await drain('never-joined')).map((m) => m['text'])).toEqual(['psst']);
    expect(await req({ cmd: 'write-log', agent: 'agent-a', text: 'notes' })).toEqual({
      ok: true,
      log_file: 'logs/v6/round_1.md',
    });
    const log = await readFile(join(server?.cwd ?? '', 'logs/v6/round_1.md'), 'utf8');
    expect(log).toMatch(/\n## IMPLEMENT \/ agent-a — [^\n]+\+00:00\n\nnotes\n$/);
    expect(await req({ cmd: 'set-phase', phase: 'MERGE' })).toEqual({
      ok: false,
      error: "Invalid phase. Must be one of: ('IMPLEMENT', 'TEST', 'DISCUSS', 'SHUTDOWN')",
    });
    expect(await req({ cmd: 'set-phase', phase: 'IMPLEMENT' })).toEqual({
      ok: true,
      phase: 'IMPLEMENT',
      round: 1,
    });
    expect((await drain('agent-a')).map((m) => m['text'])).toEqual([
      'Phase changed: IMPLEMENT -> IMPLEMENT (round 1)',
    ]);
    expect(await req({ cmd: 'shutdown' })).toEqual({ ok: true, message: 'Shutting down', reason: 'manual' });
    expect(await req({ cmd: 'heartbeat', agent: 'agent-a' })).toEqual({
      ok: true,
      phase: 'SHUTDOWN',
      round: 1,
    });
    expect(await req({ cmd: 'heartbeat', agent: 'stranger' })).toEqual({
      ok: true,
      phase: 'SHUTDOWN',
      round: 1,
    });
    const agents = ((await req({ cmd: 'status' }))['data'] as { agents: Reply }).agents;
    expect(Object.keys(agents)).toEqual(['agent-a', 'agent-b']);
  });

  it('keeps stale discuss_done marks and the round on set-phase DISCUSS', async () => {
    await open();
    await req({ cmd: 'set-phase', phase: 'DISCUSS' });
    await req({ cmd: 'discuss-done', agent: 'agent-a' });
    await req({ cmd: 'set-phase', phase: 'TEST' });
    await req({ cmd: 'set-phase', phase: 'DISCUSS' });
    const data = (await req({ cmd: 'status' }))['data'] as Reply;
    expect(data).toMatchObject({ phase: 'DISCUSS', round: 1, discuss_done: ['agent-a'] });
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

  it('pages get-discussion with next_offset when the log exceeds 60 KiB', async () => {
    await open();
    await req({ cmd: 'set-phase', phase: 'DISCUSS' });
    for (let i = 0; i < 6; i++)
      await req({ cmd: 'discuss', agent: 'agent-a', text: `${i}`.padEnd(20_000, '.') });
    const first = await client.request({ cmd: 'get-discussion' });
    expect(first['total']).toBe(6);
    expect(first['next_offset']).toBe(3);
    const second = await req({ cmd: 'get-discussion', offset: 3, limit: 2 });
    expect((second['discussion'] as Reply[]).map((e) => String(e['text']).charAt(0))).toEqual(['3', '4']);
    expect(second['next_offset']).toBe(5);
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
    expect((await server?.bus.listMailboxes())?.map((m) => m.mailbox)).toEqual([]);
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

  it('aborts a command with the OS error text when the round log cannot be written', async () => {
    await open();
    await writeFile(join(server?.cwd ?? '', 'logs'), 'a file where the folder should be');
    await req({ cmd: 'join', agent: 'agent-a' });
    const failed = await req({ cmd: 'impl-done', agent: 'agent-a' });
    expect(failed['ok']).toBe(false);
    expect(String(failed['error'])).toMatch(/EEXIST|ENOTDIR/);
    const tested = await req({ cmd: 'test-result', agent: 'agent-b', passed: true });
    expect(tested['ok']).toBe(false);
    const data = (await req({ cmd: 'status' }))['data'] as Reply;
    expect(data['phase']).toBe('IMPLEMENT');
    expect(data['test_result']).toMatchObject({ agent: 'agent-b', passed: true });
  });

  it('cuts test_result.output so a status line stays under 64 KiB', async () => {
    await open(['agent-a', 'agent-b', 'agent-c']);
    await req({ cmd: 'test-result', agent: 'agent-b', output: 'o'.repeat(60_000) });
    await req({ cmd: 'set-phase', phase: 'DISCUSS' });
    for (const n of [1, 2]) await req({ cmd: 'discuss-done', agent: `${n}`.repeat(3_000) });
    client.send({ cmd: 'status' });
    const line = (await client.next()) ?? '';
    expect(Buffer.byteLength(`${line}\n`)).toBeLessThan(65_536);
    const result = (JSON.parse(line) as { data: { test_result: Reply } }).data.test_result;
    expect(result['output_truncated']).toBe(true);
    expect(String(result['output']).length).toBeGreaterThan(50_000);
  });
});
