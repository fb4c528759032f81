import { describe, expect, it } from 'vitest';
import type { AgentRunEvent } from '../agents/agent-runner.js';
import { FailedEdits } from './failed-edits.js';

const tool = (callId: string | undefined, name: string, kind: 'edit' | 'command', summary: string) =>
  ({ type: 'tool', ...(callId !== undefined && { callId }), name, kind, summary, input: '{}' }) as const;
const result = (callId: string | undefined, isError: boolean, output: string) =>
  ({ type: 'tool_result', ...(callId !== undefined && { callId }), isError, output }) as const;

function quotesOf(events: readonly AgentRunEvent[]): readonly string[] {
  const edits = new FailedEdits();
  for (const event of events) edits.observe(event);
  return edits.quotes;
}

describe('failed edits of a turn', () => {
  it('quotes an edit whose result is an error, paired by call id', () => {
    expect(
      quotesOf([
        tool('a', 'Write', 'edit', '/w/test/nc.js'),
        tool('b', 'Edit', 'edit', '/w/index.js'),
        result('b', true, '<tool_use_error>File has not been read yet. Read it first before writing to it.'),
        result('a', true, 'Claude requested permissions to edit /w/test/nc.js which is a sensitive file.'),
      ]),
    ).toEqual([
      'Edit /w/index.js: <tool_use_error>File has not been read yet. Read it first before writing to it.',
      'Write /w/test/nc.js: Claude requested permissions to edit /w/test/nc.js which is a sensitive file.',
    ]);
  });

  it('pairs a result without a call id with the latest call', () => {
    expect(
      quotesOf([tool(undefined, 'write_file', 'edit', 'a.ts'), result(undefined, true, 'denied')]),
    ).toEqual(['write_file a.ts: denied']);
  });

  it('leaves out failed commands and edits that worked', () => {
    expect(
      quotesOf([
        tool('a', 'Bash', 'command', 'npm test'),
        result('a', true, '1 failing'),
        tool('b', 'Write', 'edit', 'a.ts'),
        result('b', false, 'File created'),
        { type: 'error', message: 'permission denied for Bash: rm -rf /' },
      ]),
    ).toEqual([]);
  });
});
