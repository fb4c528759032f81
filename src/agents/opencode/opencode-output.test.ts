import { describe, expect, it } from 'vitest';
import type { AgentRunEvent } from '../agent-runner.js';
import { OpencodeOutputParser } from './opencode-output.js';

const SESSION = 'ses_dccbd783bffegi2zW6MBxLkcQx';

function events(lines: readonly Record<string, unknown>[]): AgentRunEvent[] {
  const parser = new OpencodeOutputParser();
  return lines
    .flatMap((l) =>
      parser.onLine(JSON.stringify({ timestamp: 1796156330022, sessionID: SESSION, ...l }), 'stdout'),
    )
    .filter((e) => e.type !== 'session');
}

function toolUse(tool: string, callID: string, state: Record<string, unknown>): Record<string, unknown> {
  return {
    type: 'tool_use',
    part: { type: 'tool', tool, callID, state, id: `prt_${callID}`, sessionID: SESSION },
  };
}

function stepFinish(input: number, output: number, cost: number, cacheRead = 0): Record<string, unknown> {
  return {
    type: 'step_finish',
    part: {
      type: 'step-finish',
      reason: 'tool-calls',
      tokens: { total: input + output, input, output, reasoning: 0, cache: { write: 0, read: cacheRead } },
      cost,
    },
  };
}

describe('opencode output parser: progress events', () => {
  it('reports a completed tool_use part as a tool and its output', () => {
    const state = {
      status: 'completed',
      input: { command: 'git status --short', description: 'Show changes' },
      output: ' M src/a.ts\n',
      title: 'git status --short',
      metadata: { exit: 0 },
      time: { start: 1, end: 2 },
    };
    expect(events([toolUse('bash', 'call_1', state)])).toEqual([
      {
        type: 'tool',
        callId: 'call_1',
        name: 'bash',
        kind: 'command',
        summary: 'git status --short',
        input: JSON.stringify(state.input),
      },
      { type: 'tool_result', callId: 'call_1', isError: false, output: ' M src/a.ts\n' },
    ]);
  });

  it('reports a tool_use part in the error state with its error as a failed result', () => {
    const state = {
      status: 'error',
      input: { filePath: '/w/missing.ts' },
      error: 'File not found: /w/missing.ts',
      time: { start: 1, end: 2 },
    };
    expect(events([toolUse('read', 'call_2', state)])).toEqual([
      expect.objectContaining({ type: 'tool', callId: 'call_2', kind: 'read', summary: '/w/missing.ts' }),
      { type: 'tool_result', callId: 'call_2', isError: true, output: 'File not found: /w/missing.ts' },
    ]);
  });

  it('reports a running call once, and its result when it is printed again completed', () => {
    const input = { pattern: '**/*.ts', path: '/w' };
    const got = events([
      toolUse('glob', 'call_3', { status: 'running', input }),
      toolUse('glob', 'call_3', { status: 'completed', input, output: '/w/a.ts' }),
    ]);
    expect(got.map((e) => e.type)).toEqual(['tool', 'tool_result']);
    expect(got[0]).toMatchObject({ kind: 'search', summary: '**/*.ts' });
  });

  it('reports the usage summed over the steps after each step_finish', () => {
    expect(events([stepFinish(7368, 15, 0.01, 100), stepFinish(7447, 2, 0.02)])).toEqual([
      { type: 'usage', usage: { inputTokens: 7468, outputTokens: 15, costUsd: 0.01 } },
      { type: 'usage', usage: { inputTokens: 7468 + 7447, outputTokens: 17, costUsd: 0.03 } },
    ]);
  });

  it('reports an error event with the API message', () => {
    const error = { name: 'APIError', data: { message: 'bad request from the endpoint', statusCode: 400 } };
    expect(events([{ type: 'error', error }])).toEqual([
      { type: 'error', message: 'bad request from the endpoint' },
    ]);
  });
});
