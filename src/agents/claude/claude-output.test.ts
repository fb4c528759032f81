import { describe, expect, it } from 'vitest';
import type { AgentRunEvent } from '../agent-runner.js';
import { ClaudeOutputParser } from './claude-output.js';

const SESSION = '956b3a5a-9482-4eb1-920d-0177390539b3';

/** The events of each line, in order, skipping the session event of the first line. */
function events(lines: readonly unknown[]): AgentRunEvent[] {
  const parser = new ClaudeOutputParser();
  return lines.flatMap((l) => parser.onLine(JSON.stringify(l), 'stdout')).filter((e) => e.type !== 'session');
}

const usage = (input: number, output: number, cacheRead = 0) => ({
  input_tokens: input,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: cacheRead,
  output_tokens: output,
});

function assistant(id: string, content: readonly unknown[], u?: ReturnType<typeof usage>) {
  return {
    type: 'assistant',
    message: { id, type: 'message', role: 'assistant', model: 'claude-opus-4-8', content, usage: u },
    parent_tool_use_id: null,
    session_id: SESSION,
  };
}

function toolResult(content: unknown, isError?: boolean) {
  return {
    type: 'user',
    message: {
      role: 'user',
      content: [
        {
          tool_use_id: 'toolu_1',
          type: 'tool_result',
          content,
          ...(isError !== undefined && { is_error: isError }),
        },
      ],
    },
    session_id: SESSION,
  };
}

function result(denials: readonly unknown[]) {
  return {
    type: 'result',
    subtype: 'success',
    is_error: false,
    result: 'done',
    session_id: SESSION,
    total_cost_usd: 0.01,
    usage: usage(10, 2),
    permission_denials: denials,
  };
}

describe('claude output parser: progress events', () => {
  it('reports tool_use blocks as tool events with the kind and summary of each tool', () => {
    const got = events([
      assistant('msg_1', [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls -la', description: 'List' } },
        {
          type: 'tool_use',
          id: 'toolu_2',
          name: 'Edit',
          input: { file_path: '/w/a.ts', old_string: 'a', new_string: 'b' },
        },
        { type: 'tool_use', id: 'toolu_3', name: 'Grep', input: { pattern: 'TODO', path: '/w' } },
        {
          type: 'tool_use',
          id: 'toolu_4',
          name: 'WebFetch',
          input: { url: 'https://example.com', prompt: 'x' },
        },
        { type: 'tool_use', id: 'toolu_5', name: 'mcp__github__get_issue', input: { number: 4 } },
      ]),
    ]);
    expect(got[0]).toEqual({ type: 'message', text: 'Let me look.' });
    expect(got.slice(1).map((e) => (e.type === 'tool' ? [e.callId, e.kind, e.summary] : e.type))).toEqual([
      ['toolu_1', 'command', 'ls -la'],
      ['toolu_2', 'edit', '/w/a.ts'],
      ['toolu_3', 'search', 'TODO'],
      ['toolu_4', 'web', 'https://example.com'],
      ['toolu_5', 'other', 'mcp__github__get_issue'],
    ]);
    expect(got[1]).toMatchObject({ name: 'Bash', input: '{"command":"ls -la","description":"List"}' });
  });

  it('reports tool_result blocks with string or text-block content and is_error', () => {
    expect(events([toolResult('total 2\nREADME.md\n')])).toEqual([
      { type: 'tool_result', callId: 'toolu_1', isError: false, output: 'total 2\nREADME.md\n' },
    ]);
    const blocks = [
      { type: 'text', text: 'Exit code 1' },
      { type: 'text', text: 'npm ERR! missing script' },
    ];
    expect(events([toolResult(blocks, true)])).toEqual([
      {
        type: 'tool_result',
        callId: 'toolu_1',
        isError: true,
        output: 'Exit code 1\nnpm ERR! missing script',
      },
    ]);
  });

  it('cuts a long tool result at 4 KiB', () => {
    const [event] = events([toolResult('a'.repeat(10_000))]);
    expect(event).toMatchObject({
      type: 'tool_result',
      output: `${'a'.repeat(4096)}… [5904 more characters]`,
    });
  });

  it('sums the usage of the assistant messages, counting a message printed once per block only once', () => {
    const got = events([
      assistant('msg_1', [{ type: 'text', text: 'a' }], usage(100, 1, 900)),
      assistant(
        'msg_1',
        [{ type: 'tool_use', id: 't', name: 'Read', input: { file_path: '/w/a' } }],
        usage(100, 1, 900),
      ),
      assistant('msg_2', [{ type: 'text', text: 'b' }], usage(50, 7)),
    ]).filter((e) => e.type === 'usage');
    expect(got).toEqual([
      { type: 'usage', usage: { inputTokens: 1000, outputTokens: 1, costUsd: 0 } },
      { type: 'usage', usage: { inputTokens: 1050, outputTokens: 8, costUsd: 0 } },
    ]);
  });

  it('reports a system api_retry as an error', () => {
    const retry = {
      type: 'system',
      subtype: 'api_retry',
      attempt: 1,
      max_retries: 10,
      retry_delay_ms: 600,
      error_status: 529,
      error: 'overloaded',
      session_id: SESSION,
    };
    expect(events([retry])).toEqual([
      { type: 'error', message: 'API request failed: overloaded (HTTP 529); retry 1/10 in 600 ms' },
    ]);
  });

  it('reports refused tools of the result as errors and a refused question as waiting', () => {
    const got = events([
      result([
        { tool_name: 'Bash', tool_use_id: 'toolu_1', tool_input: { command: 'rm -rf build' } },
        { tool_name: 'Write', tool_use_id: 'toolu_2', tool_input: { file_path: '/etc/hosts', content: 'x' } },
        {
          tool_name: 'AskUserQuestion',
          tool_use_id: 'toolu_3',
          tool_input: {
            questions: [
              {
                question: 'Which database?',
                header: 'DB',
                options: [{ label: 'sqlite' }],
                multiSelect: false,
              },
            ],
          },
        },
        { tool_name: 'ExitPlanMode', tool_use_id: 'toolu_4', tool_input: { plan: '1. add tests\n2. fix' } },
      ]),
    ]);
    expect(got).toEqual([
      { type: 'error', message: 'permission denied for Bash: rm -rf build' },
      { type: 'error', message: 'permission denied for Write: /etc/hosts' },
      { type: 'waiting', question: 'Which database?' },
      { type: 'waiting', question: 'Approve this plan?\n1. add tests\n2. fix' },
    ]);
  });

  it('still parses the final result when it carries no permission_denials', () => {
    const parser = new ClaudeOutputParser();
    const { permission_denials: _, ...bare } = result([]);
    expect(parser.onLine(JSON.stringify(bare), 'stdout')).toEqual([{ type: 'session', sessionId: SESSION }]);
    expect(parser.finish({ stdout: '', stderr: '', exitCode: 0 })).toMatchObject({
      text: 'done',
      isError: false,
    });
  });
});
