// agent-sync round commands: impl-done, test-result, discuss, set-phase, write-log and the round log.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { commandSession, type Reply } from '../fixtures/agent-sync-session.js';

describe('agent-sync round commands', () => {
  const session = commandSession();
  const { open, req, drain } = session;
  afterEach(() => session.close());

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
    const log = await readFile(join(session.server?.cwd ?? '', 'logs/v6/round_1.md'), 'utf8');
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
    const log = await readFile(join(session.server?.cwd ?? '', 'logs/v6/round_1.md'), 'utf8');
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
    const log = await readFile(join(session.server?.cwd ?? '', 'logs/v6/round_1.md'), 'utf8');
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

  it('pages get-discussion with next_offset when the log exceeds 60 KiB', async () => {
    await open();
    await req({ cmd: 'set-phase', phase: 'DISCUSS' });
    for (let i = 0; i < 6; i++)
      await req({ cmd: 'discuss', agent: 'agent-a', text: `${i}`.padEnd(20_000, '.') });
    const first = await session.client.request({ cmd: 'get-discussion' });
    expect(first['total']).toBe(6);
    expect(first['next_offset']).toBe(3);
    const second = await req({ cmd: 'get-discussion', offset: 3, limit: 2 });
    expect((second['discussion'] as Reply[]).map((e) => String(e['text']).charAt(0))).toEqual(['3', '4']);
    expect(second['next_offset']).toBe(5);
  });

  it('aborts a command with the OS error text when the round log cannot be written', async () => {
    await open();
    await writeFile(join(session.server?.cwd ?? '', 'logs'), 'a file where the folder should be');
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
    session.client.send({ cmd: 'status' });
    const line = (await session.client.next()) ?? '';
    expect(Buffer.byteLength(`${line}\n`)).toBeLessThan(65_536);
    const result = (JSON.parse(line) as { data: { test_result: Reply } }).data.test_result;
    expect(result['output_truncated']).toBe(true);
    expect(String(result['output']).length).toBeGreaterThan(50_000);
  });
});
