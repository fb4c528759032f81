import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentRunEvent } from '../agent-runner.js';
import type { ParsedOutput } from '../cli/cli-backend.js';
import { ClaudeOutputParser } from './claude-output.js';

// Real stdout of claude 2.1.197 `-p --output-format stream-json --verbose` against the model endpoint.
const recordedDir = new URL('../../../test/fakes/recorded/claude/', import.meta.url);
const fakeClaude = fileURLToPath(new URL('../../../test/fakes/bin/claude', import.meta.url));

function recorded(name: string): string {
  return readFileSync(new URL(name, recordedDir), 'utf8');
}

function parse(stdout: string, exitCode = 0): ParsedOutput | null {
  const parser = new ClaudeOutputParser();
  for (const line of stdout.split('\n')) parser.onLine(line, 'stdout');
  return parser.finish({ stdout, stderr: '', exitCode });
}

function events(stdout: string): AgentRunEvent[] {
  const parser = new ClaudeOutputParser();
  return stdout.split('\n').flatMap((line) => parser.onLine(line, 'stdout'));
}

function fake(env: Record<string, string> = {}): string {
  const args = ['-p', '--output-format', 'stream-json', '--verbose', '--permission-mode', 'acceptEdits'];
  // The fake exits 1 on is_error, as the real CLI does; its stdout is the output either way.
  return spawnSync(process.execPath, [fakeClaude, ...args], {
    input: 'say hi',
    env: { PATH: process.env['PATH'] ?? '', ...env },
    encoding: 'utf8',
  }).stdout;
}

const jsonObject = z.record(z.string(), z.unknown());
type Json = z.infer<typeof jsonObject>;

function lines(stdout: string): Json[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => jsonObject.parse(JSON.parse(l)));
}

/** The keys of each kind of line (`type/subtype`), and of its `message`, for comparing shapes. */
function shapes(stdout: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const line of lines(stdout)) {
    const kind = `${String(line['type'])}/${String(line['subtype'] ?? '')}`;
    const keys = out.get(kind) ?? new Set<string>();
    for (const k of Object.keys(line)) keys.add(k);
    const message = line['message'];
    if (typeof message === 'object' && message !== null)
      for (const k of Object.keys(message)) keys.add(`message.${k}`);
    out.set(kind, keys);
  }
  return out;
}

describe('claude output parser on recorded real output', () => {
  it('reads text, session and this turn usage from a recorded reply turn', () => {
    expect(parse(recorded('reply.stdout.jsonl'))).toEqual({
      text: 'Hello from the endpoint.',
      sessionId: '504fcba3-a4e7-4bae-97c3-1c6cfc7ef7b8',
      isError: false,
      usage: { inputTokens: 19000, outputTokens: 6, costUsd: 0.09515 },
    });
  });

  it('reads the final text and the usage of both requests from a recorded tool turn', () => {
    const stdout = recorded('tool.stdout.jsonl');
    const kinds = lines(stdout).map((l) => String(l['type']));
    expect(kinds).toEqual(['system', 'assistant', 'user', 'assistant', 'result']);
    expect(parse(stdout)).toMatchObject({
      text: 'Wrote hello.txt.',
      isError: false,
      usage: { inputTokens: 19012 + 19115, outputTokens: 16 + 4 },
    });
  });

  it('reports is_error with the result text as the error message from a recorded API error', () => {
    const text =
      'Prompt is too long · this conversation is a single exchange and cannot be compacted — the request size comes mostly from system prompt, tool definitions, or attachments.';
    expect(parse(recorded('api-error.stdout.jsonl'), 1)).toMatchObject({
      text,
      isError: true,
      errorMessage: text,
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
    });
  });
});

describe('claude progress events on recorded real output', () => {
  it('reports the Write call of a recorded tool turn, its result and the usage of both requests', () => {
    expect(events(recorded('tool.stdout.jsonl'))).toEqual([
      { type: 'session', sessionId: '956b3a5a-9482-4eb1-920d-0177390539b3' },
      {
        type: 'tool',
        callId: 'call_d8924cbb04b14db18f4a5356',
        name: 'Write',
        kind: 'edit',
        summary: '/tmp/musubi-real-cli-rec/work/hello.txt',
        input: '{"file_path":"/tmp/musubi-real-cli-rec/work/hello.txt","content":"hi\\n"}',
      },
      { type: 'usage', usage: { inputTokens: 19012, outputTokens: 1, costUsd: 0 } },
      {
        type: 'tool_result',
        callId: 'call_d8924cbb04b14db18f4a5356',
        isError: false,
        output:
          'File created successfully at: /tmp/musubi-real-cli-rec/work/hello.txt (file state is current in your context — no need to Read it back)',
      },
      { type: 'message', text: 'Wrote hello.txt.' },
      { type: 'usage', usage: { inputTokens: 19012 + 19115, outputTokens: 2, costUsd: 0 } },
    ]);
  });

  it('reports no tool, error or waiting event for a recorded reply turn and a recorded API error', () => {
    const kinds = (name: string) => events(recorded(name)).map((e) => e.type);
    expect(kinds('reply.stdout.jsonl')).toEqual(['session', 'message', 'usage']);
    // The API error comes as claude's synthetic assistant message and the is_error result, not as a retry.
    expect(kinds('api-error.stdout.jsonl')).toEqual(['session', 'message', 'usage']);
  });
});

describe('fake claude against the recorded real shapes', () => {
  it('parses to text, session and usage like the real output', () => {
    const parsed = parse(fake());
    expect(parsed).toMatchObject({
      text: 'echo: say hi',
      isError: false,
      usage: { inputTokens: 6, outputTokens: 12 },
    });
    expect(parsed?.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(parse(fake({ FAKE_AGENT_IS_ERROR: '1' }), 1)).toMatchObject({
      isError: true,
      errorMessage: 'Not logged in · Please run /login',
    });
  });

  it('prints only line kinds and keys that the real CLI prints', () => {
    const real = shapes(recorded('reply.stdout.jsonl'));
    for (const [kind, keys] of shapes(fake())) {
      expect(real.has(kind), kind).toBe(true);
      const missing = [...keys].filter((k) => !(real.get(kind)?.has(k) ?? false));
      expect(missing, kind).toEqual([]);
    }
    const realError = shapes(recorded('api-error.stdout.jsonl'));
    for (const [kind, keys] of shapes(fake({ FAKE_AGENT_IS_ERROR: '1' }))) {
      const missing = [...keys].filter((k) => !(realError.get(kind)?.has(k) ?? false));
      expect(missing, kind).toEqual([]);
    }
  });
});
