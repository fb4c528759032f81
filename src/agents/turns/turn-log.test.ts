import { describe, expect, it } from 'vitest';
import { createIdGenerator } from '../../core/ids.js';
import { createSilentLogger } from '../../core/logger.js';
import { SecretMask } from '../../core/secret-mask.js';
import { memoryBus } from '../../../test/fixtures/memory-bus.js';
import type { AgentRunResult, AgentRunner } from '../agent-runner.js';
import { TurnLog } from './turn-log.js';

const result = (over: Partial<AgentRunResult> = {}): AgentRunResult => ({
  backend: 'scripted',
  text: 'done',
  exitCode: 0,
  signal: null,
  isError: false,
  timedOut: false,
  canceled: false,
  durationMs: 5,
  stderrTail: '',
  isOutputTruncated: false,
  usage: { inputTokens: 10, outputTokens: 3, costUsd: 0.01 },
  ...over,
});

function setup(options: { retention?: number; maxEntries?: number; secretMask?: SecretMask } = {}) {
  const { bus, clock } = memoryBus();
  const log = new TurnLog({
    kv: bus.kv,
    events: bus,
    clock,
    ids: createIdGenerator(clock),
    logger: createSilentLogger(),
    ...options,
  });
  return { bus, clock, log };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('TurnLog', () => {
  it('records the prompt with its secrets masked, and counts it as the agent got it', async () => {
    const key = 'sk-ant-FAKE1234567890abcdef';
    const { log } = setup({ secretMask: new SecretMask([key]) });
    const turn = log.begin('alice', 'claude', { prompt: `retry with ${key}` });
    await turn.finish({ result: result() });
    const { turn: summary } = await log.get(turn.id);
    expect(summary).toMatchObject({ prompt: 'retry with sk-ant-…[masked]', promptChars: 11 + key.length });
  });

  it('records a turn: summary, numbered entries, activity while running, outcome at the end', async () => {
    const { bus, clock, log } = setup();
    const turn = log.begin('alice', 'claude', {
      prompt: 'fix the bug',
      label: { team: 't', phase: 'IMPLEMENT' },
    });
    turn.onEvent({ type: 'started', pid: 1, argv: ['/usr/bin/claude', '-p', 'fix the bug'] });
    turn.onEvent({ type: 'line', stream: 'stdout', line: '{"raw":true}' });
    turn.onEvent({
      type: 'tool',
      name: 'Bash',
      kind: 'command',
      summary: 'npm test',
      input: '{"command":"npm test"}',
    });
    clock.advance(2000);
    await flush();
    const running = await log.get(turn.id);
    expect(running.turn).toMatchObject({ state: 'running', activity: { kind: 'command', text: 'npm test' } });
    expect(running.entries.map((e) => e.kind)).toEqual(['started', 'tool']);
    // Only the program name: the arguments hold the prompt.
    expect(running.entries[0]).toMatchObject({ kind: 'started', command: 'claude' });

    turn.onEvent({ type: 'tool_result', isError: true, output: 'x'.repeat(5000) });
    turn.onEvent({ type: 'waiting', question: 'May I run rm?' });
    await turn.finish({ result: result({ text: 'fixed it' }) });
    const done = await log.get(turn.id);
    expect(done.turn).toMatchObject({
      agent: 'alice',
      team: 't',
      phase: 'IMPLEMENT',
      state: 'succeeded',
      outcome: 'fixed it',
      toolCalls: 1,
      entries: 5,
      usage: { inputTokens: 10, outputTokens: 3, costUsd: 0.01 },
    });
    expect(done.turn.activity).toBeUndefined();
    expect(done.entries.map((e) => e.n)).toEqual([0, 1, 2, 3, 4]);
    const output = done.entries[2];
    expect(output?.kind === 'tool_result' && output.output).toMatch(/… \[904 more characters\]$/);
    const types = (await bus.readEvents()).map((e) => e.type);
    expect(types[0]).toBe('agent.turn_started');
    expect(types.filter((t) => t === 'agent.turn_event')).toHaveLength(5);
    expect(types.at(-1)).toBe('agent.turn_finished');
  });

  it('maps failures, timeouts, cancels and errors before start to their states', async () => {
    const { log } = setup();
    const cases = [
      [result({ isError: true, errorMessage: 'API Error: 401' }), 'failed', 'API Error: 401'],
      [result({ timedOut: true, isError: true }), 'timed_out', 'done'],
      [result({ canceled: true, isError: true }), 'cancelled', 'done'],
    ] as const;
    for (const [r, state, outcome] of cases) {
      const turn = log.begin('a', 'codex', { prompt: 'p' });
      await turn.finish({ result: r });
      expect((await log.get(turn.id)).turn).toMatchObject({ state, outcome });
    }
    const never = log.begin('a', 'codex', { prompt: 'p' });
    await never.finish({ error: new Error('spawn ENOENT') });
    expect((await log.get(never.id)).turn).toMatchObject({ state: 'failed', outcome: 'spawn ENOENT' });
  });

  it('bounds a transcript, keeping the first entries and the end', async () => {
    const { log } = setup({ maxEntries: 3 });
    const turn = log.begin('a', 'scripted', { prompt: 'p' });
    for (let i = 0; i < 10; i++) turn.onEvent({ type: 'message', text: `m${i}` });
    await turn.finish({ result: result() });
    const detail = await log.get(turn.id);
    expect(detail.entries.map((e) => e.kind)).toEqual(['message', 'message', 'message', 'finished']);
    expect(detail.droppedEntries).toBe(7);
    expect(detail.turn.entries).toBe(11);
  });

  it('shows a running turn whose process is gone as interrupted', async () => {
    const { clock, log } = setup();
    const turn = log.begin('a', 'scripted', { prompt: 'p' });
    await flush();
    // The heartbeat keeps a live turn fresh…
    clock.advance(120_000);
    await flush();
    expect((await log.get(turn.id)).turn.state).toBe('running');
    // …and a log read by another process, with no heartbeat written, says interrupted.
    const reader = new TurnLog({
      kv: log.kv,
      events: { publish: () => Promise.resolve() },
      clock: { now: () => clock.now() + 100_000, setTimer: () => ({ cancel: () => undefined }) },
      ids: createIdGenerator(clock),
      logger: createSilentLogger(),
    });
    expect((await reader.get(turn.id)).turn.state).toBe('interrupted');
  });

  it('lists newest first with filters and prunes beyond the retention', async () => {
    const { clock, log } = setup({ retention: 25 });
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      clock.advance(10);
      const turn = log.begin(i % 2 === 0 ? 'even' : 'odd', 'scripted', {
        prompt: `p${i}`,
        label: { run: i < 5 ? 'r1' : 'r2' },
      });
      ids.push(turn.id);
      await turn.finish({ result: result() });
    }
    await log.prune();
    const all = await log.list({ limit: 100 });
    expect(all).toHaveLength(25);
    expect(all[0]?.id).toBe(ids.at(-1));
    expect(all.map((t) => t.id)).toEqual(ids.slice(-25).reverse());
    expect((await log.list({ agent: 'even', limit: 100 })).every((t) => t.agent === 'even')).toBe(true);
    expect(await log.list({ run: 'r1' })).toEqual([]);
    await expect(log.get(ids[0]!)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('wraps a runner: every turn recorded, events passed on, rejections recorded and rethrown', async () => {
    const { log } = setup();
    const seen: string[] = [];
    const runner: AgentRunner = {
      backend: 'scripted',
      available: () => Promise.resolve({ ready: true, reasons: [] }),
      run: (input) => {
        input.onEvent?.({ type: 'message', text: 'hi' });
        if (input.prompt === 'boom') return Promise.reject(new Error('cannot start'));
        return Promise.resolve(result());
      },
    };
    const recorded = log.recorded('bob', runner, { team: 'crew' });
    await recorded.run({
      prompt: 'ok',
      cwd: '.',
      timeoutMs: 1000,
      onEvent: (e) => seen.push(e.type),
      label: { agent: 'worker-1' },
    });
    await expect(recorded.run({ prompt: 'boom', cwd: '.', timeoutMs: 1000 })).rejects.toThrow('cannot start');
    expect(seen).toEqual(['message']);
    const turns = await log.list();
    expect(turns.map((t) => [t.agent, t.team, t.state])).toEqual([
      ['bob', 'crew', 'failed'],
      ['worker-1', 'crew', 'succeeded'],
    ]);
  });
});
