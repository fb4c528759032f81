import { describe, expect, it } from 'vitest';
import { Transcript } from './transcript.js';
import { TurnStore } from './turn-store.js';
import type { TranscriptEntry, TurnSummary } from '../gateways/http/api-schemas.js';

const message = (n: number, text = `m${n}`): TranscriptEntry => ({ n, at: 1000 + n, kind: 'message', text });
const turn = (id: string, extra: Partial<TurnSummary> = {}): TurnSummary => ({
  id,
  agent: 'alice',
  backend: 'claude',
  state: 'running',
  startedAt: 1000,
  lastEventAt: 1000,
  heartbeatAt: 1000,
  prompt: 'fix the bug',
  promptChars: 11,
  usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
  toolCalls: 0,
  entries: 0,
  ...extra,
});

describe('dashboard transcript', () => {
  it('keeps entries in n order, each once, whether they come from the reply or the stream', () => {
    const t = new Transcript('turn-1');
    expect(t.add(message(2))).toBe(true);
    expect(t.add(message(3))).toBe(true);
    expect(t.merge([message(0), message(1), message(2), message(3)])).toBe(2);
    expect(t.add(message(3, 'replayed'))).toBe(false);
    expect(t.add(message(4))).toBe(true);
    expect(t.list().map((e) => e.n)).toEqual([0, 1, 2, 3, 4]);
    expect(t.list()[3]).toEqual(message(3));
  });

  it('names the tool call a result belongs to', () => {
    const t = new Transcript('turn-1');
    t.add({
      n: 0,
      at: 1,
      kind: 'tool',
      callId: 'c1',
      name: 'Bash',
      toolKind: 'command',
      summary: 'ls',
      input: '{}',
    });
    expect(t.toolNameOf('c1')).toBe('Bash');
    expect(t.toolNameOf('c2')).toBeUndefined();
    expect(t.toolNameOf(undefined)).toBeUndefined();
  });
});

describe('dashboard turn log', () => {
  it('lists an agent’s turns newest first and never moves a finished turn back to running', () => {
    const log = new TurnStore();
    expect(
      log.merge([turn('a', { startedAt: 1 }), turn('b', { startedAt: 2 }), turn('c', { agent: 'bob' })]),
    ).toBe(true);
    expect(log.forAgent('alice').map((t) => t.id)).toEqual(['b', 'a']);
    expect(log.upsert(turn('a', { startedAt: 1, state: 'succeeded', lastEventAt: 5, endedAt: 5 }))).toBe(
      true,
    );
    expect(log.upsert(turn('a', { startedAt: 1, lastEventAt: 9 }))).toBe(false);
    expect(log.get('a')?.state).toBe('succeeded');
    expect(log.upsert(turn('b', { startedAt: 2 }))).toBe(false);
  });

  it('follows a running turn from its live entries: activity, tools, usage and last sign of life', () => {
    const log = new TurnStore();
    log.upsert(turn('a'));
    const before = log.version;
    log.noteEntry('a', {
      n: 0,
      at: 1100,
      kind: 'tool',
      name: 'Bash',
      toolKind: 'command',
      summary: 'npm test',
      input: '',
    });
    log.noteEntry('a', {
      n: 1,
      at: 1200,
      kind: 'usage',
      usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.01 },
    });
    expect(log.get('a')).toMatchObject({
      lastEventAt: 1200,
      entries: 2,
      toolCalls: 1,
      usage: { inputTokens: 10, outputTokens: 5, costUsd: 0.01 },
      activity: { kind: 'tool', text: 'Bash: npm test', at: 1100 },
    });
    expect(log.version).toBeGreaterThan(before);
    expect(log.noteEntry('unknown', message(0))).toBe(false);
  });

  it('keeps only the newest turns by start beyond its capacity', () => {
    const log = new TurnStore(10);
    for (let i = 0; i < 30; i++) log.upsert(turn(`t${i}`, { startedAt: i }));
    expect(log.size).toBeLessThanOrEqual(11);
    expect(log.all().at(-1)?.id).toBe('t29');
    expect(log.get('t0')).toBeUndefined();
  });
});
