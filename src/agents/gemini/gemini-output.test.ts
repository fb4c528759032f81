import { describe, expect, it } from 'vitest';
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
