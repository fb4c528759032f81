import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GeminiOutputParser } from './gemini-output.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const RECORDED = join(ROOT, 'test', 'fakes', 'recorded', 'gemini');
const FAKE = join(ROOT, 'test', 'fakes', 'bin', 'gemini');

const recorded = (name: string) => readFileSync(join(RECORDED, name), 'utf8');
const parse = (stdout: string, stderr: string, exitCode: number | null) =>
  new GeminiOutputParser().finish({ stdout, stderr, exitCode });

/** Feeds every stdout line to a fresh parser, then finishes it: the events and the outcome. */
function parseStream(stdout: string, stderr: string, exitCode: number | null) {
  const parser = new GeminiOutputParser();
  const events = stdout.split('\n').flatMap((line) => parser.onLine(line, 'stdout'));
  return { events, parsed: parser.finish({ stdout, stderr, exitCode }) };
}

function runFake(
  env: Record<string, string>,
  format = 'json',
): { stdout: string; stderr: string; exitCode: number | null } {
  const r = spawnSync(process.execPath, [FAKE, '-p', '', '-o', format, '--yolo', '--skip-trust'], {
    input: 'hello fake',
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', HOME: '/nonexistent', ...env },
  });
  return { stdout: r.stdout, stderr: r.stderr, exitCode: r.status };
}

/** The key paths of an object (names of models, roles and tools as `*`), to compare shapes. */
function paths(value: unknown, path = ''): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [path];
  return Object.entries(value).flatMap(([k, v]) => {
    const key = /(models|roles|byName)$/.test(path) ? '*' : k;
    return paths(v, path === '' ? key : `${path}.${key}`);
  });
}

const shape = (value: unknown): string[] => [...new Set(paths(value))].sort();

describe('gemini 0.61 recorded output', () => {
  // Recorded against musubi's model endpoint, which reported 848 + 11549 input and 1 + 2 output tokens for the
  // reply turn's two requests (routing classifier, main stream) and 879 + 11586 + 11702 / 1 + 16 + 2 for
  // the resumed tool turn's three (classifier, write_file call, final text).
  it('parses the real reply turn: text, session id and the usage of its two requests', () => {
    expect(parse(recorded('reply.stdout.json'), recorded('reply.stderr.txt'), 0)).toEqual({
      text: 'Done.',
      isError: false,
      sessionId: '806b93d3-b1bb-473f-941d-ff6395dae352',
      usage: { inputTokens: 848 + 11549, outputTokens: 1 + 2, costUsd: 0 },
    });
  });

  it('parses the real resumed tool turn: the same session id and this turn usage only', () => {
    expect(parse(recorded('tool-resumed.stdout.json'), '', 0)).toEqual({
      text: 'Done.',
      isError: false,
      sessionId: '806b93d3-b1bb-473f-941d-ff6395dae352',
      usage: { inputTokens: 879 + 11586 + 11702, outputTokens: 1 + 16 + 2, costUsd: 0 },
    });
  });

  it('reports no progress events for the real -o json output (one object at the end, no event stream)', () => {
    const parser = new GeminiOutputParser();
    const lines = `${recorded('tool-resumed.stdout.json')}\n${recorded('reply.stdout.json')}`.split('\n');
    expect(lines.flatMap((line) => parser.onLine(line, 'stdout'))).toEqual([]);
  });

  it('parses the real API error that gemini writes to stderr (stdout empty, exit 144)', () => {
    expect(parse('', recorded('api-error.stderr.txt'), 144)).toEqual({
      text: 'Request contains an invalid argument. (400 INVALID_ARGUMENT)',
      errorMessage: 'Request contains an invalid argument. (400 INVALID_ARGUMENT)',
      isError: true,
      sessionId: 'ecce30c5-d4c5-4545-8ea7-09200c62e754',
    });
  });

  it('parses the real unauthenticated run (stderr, exit 41)', () => {
    const parsed = parse('', recorded('auth-error.stderr.txt'), 41);
    expect(parsed).toMatchObject({ isError: true, sessionId: '5a9fa9bf-bdc5-4a2f-8f36-86558ec35166' });
    expect(parsed?.errorMessage).toMatch(/^Please set an Auth method in your .*settings\.json/);
  });
});

/** The keys of each stream-json line, by line type (the timestamp's value aside). */
function lineShapes(stdout: string): Record<string, string[]> {
  const shapes: Record<string, string[]> = {};
  for (const line of stdout.split('\n').filter((l) => l !== '')) {
    const event = JSON.parse(line) as { type: string; role?: string };
    const key = event.role === undefined ? event.type : `${event.type}.${event.role}`;
    shapes[key] = [...new Set([...(shapes[key] ?? []), ...shape(event)])].sort();
  }
  return shapes;
}

describe('gemini 0.61 recorded -o stream-json output', () => {
  // The same fresh write_file turn as tool.stdout.json (-o json, same --session-id): classifier 878 / 18,
  // tool call 11584 / 23, final text 11713 / 2 tokens.
  const SESSION = '3f2a9c1e-7b4d-4e8a-9c61-2d5b8e0f4a17';
  const CALL = 'write_file__call_299a056a413346dc937ec929';

  it('reports the session, the write_file call and its result, the answer and the usage in order', () => {
    expect(parseStream(recorded('tool.stream.jsonl'), '', 0).events).toEqual([
      { type: 'session', sessionId: SESSION },
      {
        type: 'tool',
        callId: CALL,
        name: 'write_file',
        kind: 'edit',
        summary: '/tmp/musubi-real-cli-AbC123/work/notes/a.txt',
        input: '{"file_path":"/tmp/musubi-real-cli-AbC123/work/notes/a.txt","content":"hi from gemini\\n"}',
      },
      // write_file's display is a diff object, so its result line has no output.
      { type: 'tool_result', callId: CALL, isError: false, output: '' },
      { type: 'message', text: 'wrote it' },
      { type: 'usage', usage: { inputTokens: 878 + 11584 + 11713, outputTokens: 18 + 23 + 2, costUsd: 0 } },
    ]);
  });

  it('ends in the same outcome as -o json of the same turn', () => {
    const json = parse(recorded('tool.stdout.json'), '', 0);
    expect(json).toEqual({
      text: 'wrote it',
      isError: false,
      sessionId: SESSION,
      usage: { inputTokens: 878 + 11584 + 11713, outputTokens: 18 + 23 + 2, costUsd: 0 },
    });
    expect(parseStream(recorded('tool.stream.jsonl'), '', 0).parsed).toEqual(json);
  });

  it('reports the API 400 as -o json does, plus the usage of the request that came back', () => {
    const { events, parsed } = parseStream(recorded('api-error.stream.jsonl'), '', 144);
    const json = parse('', recorded('api-error.stderr.txt'), 144);
    // -o json has no stats for a failed turn; stream-json counts the classifier request that succeeded.
    expect(parsed).toEqual({ ...json, usage: { inputTokens: 875, outputTokens: 18, costUsd: 0 } });
    expect(events.at(-1)).toEqual({ type: 'error', message: json?.errorMessage });
  });

  it('reports the unauthenticated run as -o json does, without its session id (none was started)', () => {
    const stderr = recorded('auth-error.stream.stderr.txt');
    const { sessionId, ...json } = parse('', recorded('auth-error.stderr.txt'), 41) ?? {};
    expect(sessionId).toBeDefined();
    expect(parseStream('', stderr, 41).parsed).toEqual(json);
  });
});

describe('fake gemini against the recorded shapes', () => {
  it('prints stream-json lines of the real shapes on stdout', () => {
    const fake = runFake({}, 'stream-json');
    expect(fake.exitCode).toBe(0);
    const real = lineShapes(recorded('tool.stream.jsonl'));
    const fakeShapes = lineShapes(fake.stdout);
    for (const [type, keys] of Object.entries(fakeShapes)) expect(keys, type).toEqual(real[type]);
    expect(Object.keys(fakeShapes)).toEqual(['init', 'message.user', 'message.assistant', 'result']);
    expect(parseStream(fake.stdout, fake.stderr, fake.exitCode).parsed).toMatchObject({
      text: 'echo: hello fake',
      isError: false,
      sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number), costUsd: 0 },
    });
  });

  it('fails the stream-json auth check on stderr with exit 41, as the real one', () => {
    const fake = runFake({ FAKE_AGENT_IS_ERROR: '1' }, 'stream-json');
    expect(fake).toMatchObject({ exitCode: 41, stdout: '' });
    const real = parseStream('', recorded('auth-error.stream.stderr.txt'), 41).parsed;
    const parsed = parseStream(fake.stdout, fake.stderr, fake.exitCode).parsed;
    expect(parsed?.errorMessage?.replace(/your .*settings/, 'your settings')).toBe(
      real?.errorMessage?.replace(/your .*settings/, 'your settings'),
    );
  });

  it('prints a reply object of the real shape on stdout', () => {
    const fake = runFake({});
    expect(fake.exitCode).toBe(0);
    expect(shape(JSON.parse(fake.stdout))).toEqual(shape(JSON.parse(recorded('reply.stdout.json'))));
    expect(parse(fake.stdout, fake.stderr, fake.exitCode)).toMatchObject({
      text: 'echo: hello fake',
      isError: false,
      sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number), costUsd: 0 },
    });
  });

  it('prints the unauthenticated error object on stderr with exit 41, as the real one', () => {
    const fake = runFake({ FAKE_AGENT_IS_ERROR: '1' });
    expect(fake).toMatchObject({ exitCode: 41, stdout: '' });
    const real = parse('', recorded('auth-error.stderr.txt'), 41);
    const parsed = parse(fake.stdout, fake.stderr, fake.exitCode);
    expect(parsed).toMatchObject({ isError: true, sessionId: expect.any(String) });
    expect(parsed?.errorMessage?.replace(/your .*settings/, 'your settings')).toBe(
      real?.errorMessage?.replace(/your .*settings/, 'your settings'),
    );
  });
});
