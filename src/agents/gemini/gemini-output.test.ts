import { describe, expect, it } from 'vitest';
import type { AgentRunEvent } from '../agent-runner.js';
import { GeminiOutputParser } from './gemini-output.js';

const finish = (stdout: string, stderr = '', exitCode: number | null = 0) =>
  new GeminiOutputParser().finish({ stdout, stderr, exitCode });

/** What gemini 0.61 writes to stderr for an API error with `-o json`: stack noise, then the object. */
const API_ERROR_STDERR = [
  'YOLO mode is enabled. All tool calls will be automatically approved.',
  'Error when talking to Gemini API Full report available at: /tmp/x.json _ApiError: {"error":{"code":400}}',
  '    at async Turn.run (file:///cli/bundle/chunk.js:1:1) {',
  '  status: 400',
  '}',
  '{',
  '  "session_id": "ecce30c5-d4c5-4545-8ea7-09200c62e754",',
  '  "error": {',
  '    "type": "Error",',
  '    "message": "{\\"error\\":{\\"code\\":400,\\"message\\":\\"Request contains an invalid argument.\\",\\"status\\":\\"INVALID_ARGUMENT\\"}}",',
  '    "code": 400',
  '  }',
  '}',
  '',
].join('\n');

describe('GeminiOutputParser', () => {
  it('reads the error object from stderr when -o json left stdout empty', () => {
    expect(finish('', API_ERROR_STDERR, 144)).toMatchObject({
      isError: true,
      sessionId: 'ecce30c5-d4c5-4545-8ea7-09200c62e754',
    });
  });

  it('reports the API message inside the JSON-encoded API error as errorMessage', () => {
    const parsed = finish('', API_ERROR_STDERR, 144);
    expect(parsed?.errorMessage).toBe('Request contains an invalid argument. (400 INVALID_ARGUMENT)');
    expect(parsed?.text).toBe(parsed?.errorMessage);
  });

  it('reports a plain error message as it is', () => {
    const stderr =
      '{\n  "session_id": "s",\n  "error": {\n    "type": "Error",\n    "message": "terminated",\n    "code": 1\n  }\n}\n';
    expect(finish('', stderr, 1)).toMatchObject({
      isError: true,
      errorMessage: 'terminated',
      sessionId: 's',
    });
  });

  it('prefers the result on stdout over a JSON object in stderr', () => {
    const stdout = JSON.stringify({ session_id: 'a', response: 'hi', stats: { models: {} } }, null, 2);
    const stderr = '{\n  "session_id": "b",\n  "error": { "message": "old" }\n}\n';
    expect(finish(stdout, stderr)).toMatchObject({ text: 'hi', isError: false, sessionId: 'a' });
  });

  it('returns null when neither stream holds a gemini object', () => {
    expect(finish('plain text', 'some {noise} on stderr\n{\n  "other": 1\n}\n')).toBeNull();
  });
});

const SESSION = '806b93d3-b1bb-473f-941d-ff6395dae352';
const at = '2026-12-01T20:08:44.182Z';

/** A `-o stream-json` turn: a write_file call, a failed shell command, a warning, the answer. */
const STREAM_TURN = [
  { type: 'init', timestamp: at, session_id: SESSION, model: 'gemini-3.8-flash' },
  { type: 'message', timestamp: at, role: 'user', content: 'write a.txt' },
  { type: 'message', timestamp: at, role: 'assistant', content: 'I will ', delta: true },
  { type: 'message', timestamp: at, role: 'assistant', content: 'write it.', delta: true },
  {
    type: 'tool_use',
    timestamp: at,
    tool_name: 'write_file',
    tool_id: 'write_file-1',
    parameters: { file_path: '/w/a.txt', content: 'hi\n' },
  },
  {
    type: 'tool_result',
    timestamp: at,
    tool_id: 'write_file-1',
    status: 'success',
    output: 'Successfully created and wrote to new file: /w/a.txt.',
  },
  {
    type: 'tool_use',
    timestamp: at,
    tool_name: 'run_shell_command',
    tool_id: 'run_shell_command-2',
    parameters: { command: 'npm test', description: 'Run the tests' },
  },
  {
    type: 'tool_result',
    timestamp: at,
    tool_id: 'run_shell_command-2',
    status: 'error',
    error: { type: 'execution_failed', message: 'Command exited with code 1' },
  },
  { type: 'error', timestamp: at, severity: 'warning', message: 'Loop detected, stopping execution' },
  { type: 'message', timestamp: at, role: 'assistant', content: 'Done.', delta: true },
  {
    type: 'result',
    timestamp: at,
    status: 'success',
    stats: {
      total_tokens: 23324,
      input_tokens: 23288,
      output_tokens: 36,
      cached: 0,
      input: 23288,
      duration_ms: 900,
      tool_calls: 2,
    },
  },
];

function streamParse(lines: readonly unknown[]): {
  events: AgentRunEvent[];
  parser: GeminiOutputParser;
  stdout: string;
} {
  const parser = new GeminiOutputParser();
  const stdout = lines.map((l) => JSON.stringify(l)).join('\n');
  const events = stdout.split('\n').flatMap((l) => parser.onLine(l, 'stdout'));
  return { events, parser, stdout };
}

describe('GeminiOutputParser with -o stream-json', () => {
  it('reports the session, joined assistant text, tool calls and results, errors and the usage in order', () => {
    expect(streamParse(STREAM_TURN).events).toEqual([
      { type: 'session', sessionId: SESSION },
      { type: 'message', text: 'I will write it.' },
      {
        type: 'tool',
        callId: 'write_file-1',
        name: 'write_file',
        kind: 'edit',
        summary: '/w/a.txt',
        input: '{"file_path":"/w/a.txt","content":"hi\\n"}',
      },
      {
        type: 'tool_result',
        callId: 'write_file-1',
        isError: false,
        output: 'Successfully created and wrote to new file: /w/a.txt.',
      },
      expect.objectContaining({
        type: 'tool',
        callId: 'run_shell_command-2',
        kind: 'command',
        summary: 'npm test',
      }),
      {
        type: 'tool_result',
        callId: 'run_shell_command-2',
        isError: true,
        output: 'Command exited with code 1',
      },
      { type: 'error', message: 'Loop detected, stopping execution' },
      { type: 'message', text: 'Done.' },
      { type: 'usage', usage: { inputTokens: 23288, outputTokens: 36, costUsd: 0 } },
    ]);
  });

  it('answers with the text of the last model request, as -o json does, with the session and usage', () => {
    const { parser, stdout } = streamParse(STREAM_TURN);
    expect(parser.finish({ stdout, stderr: '', exitCode: 0 })).toEqual({
      text: 'Done.',
      isError: false,
      sessionId: SESSION,
      usage: { inputTokens: 23288, outputTokens: 36, costUsd: 0 },
    });
  });

  it('reports a failed result as an error event and as the failure, with the API message unwrapped', () => {
    const message = JSON.stringify({
      error: { code: 400, message: 'Request contains an invalid argument.', status: 'INVALID_ARGUMENT' },
    });
    const { events, parser, stdout } = streamParse([
      STREAM_TURN[0],
      {
        type: 'result',
        timestamp: at,
        status: 'error',
        error: { type: 'Error', message },
        stats: { input_tokens: 0, output_tokens: 0 },
      },
    ]);
    const text = 'Request contains an invalid argument. (400 INVALID_ARGUMENT)';
    expect(events.at(-1)).toEqual({ type: 'error', message: text });
    expect(parser.finish({ stdout, stderr: '', exitCode: 144 })).toMatchObject({
      isError: true,
      errorMessage: text,
      text,
      sessionId: SESSION,
    });
  });

  it('counts the thinking tokens as output, as -o json does: what each model total has beyond its input', () => {
    // gemini's output_tokens are the candidates only; thoughts (and tool-use prompts) are in total_tokens.
    const models = {
      'gemini-3.5-flash-lite': { total_tokens: 900, input_tokens: 880, output_tokens: 20 },
      'gemini-3.8-pro': { total_tokens: 12_500, input_tokens: 11_600, output_tokens: 30 },
      // An API that reported no total: its candidates still count.
      'other-model': { total_tokens: 0, input_tokens: 10, output_tokens: 5 },
    };
    const stats = { total_tokens: 13_400, input_tokens: 12_490, output_tokens: 55, models };
    const { events } = streamParse([{ type: 'result', timestamp: at, status: 'success', stats }]);
    expect(events).toEqual([
      { type: 'usage', usage: { inputTokens: 12_490, outputTokens: 20 + 900 + 5, costUsd: 0 } },
    ]);
  });

  it('keeps the text before a tool call when no request followed it (a tool that stopped the turn)', () => {
    const { parser, stdout } = streamParse([...STREAM_TURN.slice(0, 6), STREAM_TURN.at(-1)]);
    expect(parser.finish({ stdout, stderr: '', exitCode: 0 })).toMatchObject({ text: 'I will write it.' });
  });

  it('unwraps the [API Error: …] of a dropped stream and answers with it, as -o json does', () => {
    // Recorded from gemini 0.61 on a stream the endpoint closed after its first chunk.
    const { events, parser, stdout } = streamParse([
      STREAM_TURN[0],
      { type: 'message', timestamp: at, role: 'assistant', content: 'after the cut', delta: true },
      {
        type: 'result',
        timestamp: at,
        status: 'error',
        error: { type: 'unknown', message: '[API Error: terminated]' },
        stats: { total_tokens: 885, input_tokens: 867, output_tokens: 18 },
      },
    ]);
    expect(events.slice(1)).toEqual([
      { type: 'message', text: 'after the cut' },
      { type: 'usage', usage: { inputTokens: 867, outputTokens: 18, costUsd: 0 } },
      { type: 'error', message: 'terminated' },
    ]);
    expect(parser.finish({ stdout, stderr: '', exitCode: 1 })).toMatchObject({
      isError: true,
      errorMessage: 'terminated',
      text: 'terminated',
    });
  });

  it('drops the hint line stream-json adds after the message of a 429', () => {
    const message =
      '[API Error: Resource exhausted.]\nPlease wait and try again later. To increase your limits, request a quota increase through AI Studio, or switch to another /auth method';
    const { parser, stdout } = streamParse([
      { type: 'result', timestamp: at, status: 'error', error: { type: 'unknown', message } },
    ]);
    expect(parser.finish({ stdout, stderr: '', exitCode: 173 })?.errorMessage).toBe('Resource exhausted.');
  });

  it('fails an invalid stream with the reason its error line gave, as -o json does', () => {
    const reason = 'Invalid stream: The model returned an empty response or malformed tool call.';
    const { events, parser, stdout } = streamParse([
      STREAM_TURN[0],
      { type: 'error', timestamp: at, severity: 'warning', message: 'Loop detected, stopping execution' },
      { type: 'error', timestamp: at, severity: 'error', message: reason },
      { type: 'result', timestamp: at, status: 'error', stats: { input_tokens: 5, output_tokens: 0 } },
    ]);
    expect(events.filter((e) => e.type === 'error').map((e) => e.type === 'error' && e.message)).toEqual([
      'Loop detected, stopping execution',
      reason,
    ]);
    expect(parser.finish({ stdout, stderr: '', exitCode: 0 })).toEqual({
      text: '',
      isError: true,
      errorMessage: reason,
      sessionId: SESSION,
      usage: { inputTokens: 5, outputTokens: 0, costUsd: 0 },
    });
  });

  it('reads a failed auth check (exit 41, nothing on stdout) from stderr without the startup notices', () => {
    const stderr = [
      'YOLO mode is enabled. All tool calls will be automatically approved.',
      'When using Vertex AI, you must specify either:',
      '• GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION environment variables.',
      '',
    ].join('\n');
    const message = stderr.split('\n').slice(1, 3).join('\n');
    expect(finish('', stderr, 41)).toEqual({ text: message, isError: true, errorMessage: message });
    expect(finish('', stderr, 1)).toBeNull();
  });

  it('reports a failure when the stream ends without a result line', () => {
    const { parser, stdout } = streamParse(STREAM_TURN.slice(0, 5));
    expect(parser.finish({ stdout, stderr: '', exitCode: 1 })).toMatchObject({
      isError: true,
      text: 'I will write it.',
    });
  });
});
