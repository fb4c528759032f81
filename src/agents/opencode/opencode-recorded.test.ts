import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentRunEvent } from '../agent-runner.js';
import type { ParsedOutput } from '../cli/cli-backend.js';
import { OpencodeOutputParser } from './opencode-output.js';

// Real stdout of opencode 1.18.33 `run --format json` against the model endpoint (see the README there).
const recordedDir = new URL('../../../test/fakes/recorded/opencode/', import.meta.url);
const fakeOpencode = fileURLToPath(new URL('../../../test/fakes/bin/opencode', import.meta.url));

function recorded(name: string): string {
  return readFileSync(new URL(name, recordedDir), 'utf8');
}

function parse(stdout: string, exitCode = 0): ParsedOutput | null {
  const parser = new OpencodeOutputParser();
  for (const line of stdout.split('\n')) parser.onLine(line, 'stdout');
  return parser.finish({ stdout, stderr: '', exitCode });
}

function events(stdout: string): AgentRunEvent[] {
  const parser = new OpencodeOutputParser();
  return stdout.split('\n').flatMap((line) => parser.onLine(line, 'stdout'));
}

function fake(env: Record<string, string> = {}): string {
  return spawnSync(process.execPath, [fakeOpencode, 'run', '--format', 'json', '-m', 'musubi/musubi-model'], {
    input: 'say hi',
    env: { PATH: process.env['PATH'] ?? '', ...env },
    encoding: 'utf8',
  }).stdout;
}

const jsonObject = z.record(z.string(), z.unknown());

/** The keys of each event type, of its `part`, `part.tokens` and `error.data`, for comparing shapes. */
function shapes(stdout: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (kind: string, prefix: string, value: unknown) => {
    const parsed = jsonObject.safeParse(value);
    if (!parsed.success) return;
    const keys = out.get(kind) ?? new Set<string>();
    for (const k of Object.keys(parsed.data)) keys.add(`${prefix}${k}`);
    out.set(kind, keys);
  };
  for (const line of stdout.split('\n').filter((l) => l.trim() !== '')) {
    const event = jsonObject.parse(JSON.parse(line));
    const kind = String(event['type']);
    add(kind, '', event);
    const part = jsonObject.safeParse(event['part']);
    if (part.success) {
      add(kind, 'part.', part.data);
      add(kind, 'part.tokens.', part.data['tokens']);
    }
    const error = jsonObject.safeParse(event['error']);
    if (error.success) {
      add(kind, 'error.', error.data);
      add(kind, 'error.data.', error.data['data']);
    }
  }
  return out;
}

function sessionOf(stdout: string): string {
  return String(jsonObject.parse(JSON.parse(stdout.split('\n')[0] ?? '{}'))['sessionID']);
}

describe('opencode progress events on recorded real output', () => {
  it('reports the write call of a recorded tool turn, its output and the usage after each step', () => {
    const path = '/tmp/oc/ep-qOaQLf/work/a.txt';
    expect(events(recorded('tool.stdout.jsonl'))).toEqual([
      { type: 'session', sessionId: 'ses_dccbd783bffegi2zW6MBxLkcQx' },
      {
        type: 'tool',
        callId: 'call_c939b6b8b4154a9882704918',
        name: 'write',
        kind: 'edit',
        summary: path,
        input: JSON.stringify({ filePath: path, content: 'hi\n' }),
      },
      {
        type: 'tool_result',
        callId: 'call_c939b6b8b4154a9882704918',
        isError: false,
        output: 'Wrote file successfully.',
      },
      { type: 'usage', usage: { inputTokens: 7368, outputTokens: 15, costUsd: 0 } },
      { type: 'message', text: 'Done.' },
      { type: 'usage', usage: { inputTokens: 7368 + 7447, outputTokens: 17, costUsd: 0 } },
    ]);
  });

  it('reports the recorded HTTP 400 as an error event', () => {
    expect(events(recorded('error.stdout.jsonl')).filter((e) => e.type === 'error')).toEqual([
      { type: 'error', message: 'bad request from the endpoint' },
    ]);
  });
});

describe('opencode output parser on recorded real output', () => {
  it('reads text, session and usage from a recorded reply turn', () => {
    const stdout = recorded('reply.stdout.jsonl');
    expect(parse(stdout)).toEqual({
      text: 'hello from the endpoint',
      isError: false,
      sessionId: sessionOf(stdout),
      usage: { inputTokens: 7364, outputTokens: 6, costUsd: 0 },
    });
  });

  it('reads the last step text and the usage of both steps from a recorded tool turn', () => {
    const stdout = recorded('tool.stdout.jsonl');
    expect(parse(stdout)).toEqual({
      text: 'Done.',
      isError: false,
      sessionId: sessionOf(stdout),
      usage: { inputTokens: 7368 + 7447, outputTokens: 15 + 2, costUsd: 0 },
    });
  });

  it("reports the API's message as the error when the recorded turn got an HTTP 400", () => {
    const stdout = recorded('error.stdout.jsonl');
    expect(parse(stdout, 1)).toEqual({
      text: 'bad request from the endpoint',
      isError: true,
      errorMessage: 'bad request from the endpoint',
      sessionId: sessionOf(stdout),
    });
  });
});

describe('fake opencode against the recorded real output', () => {
  it('prints the same event and part shapes as the real reply turn', () => {
    expect(shapes(fake())).toEqual(shapes(recorded('reply.stdout.jsonl')));
  });

  it('prints the same error event shape as the real failed turn', () => {
    expect(shapes(fake({ FAKE_AGENT_IS_ERROR: '1' }))).toEqual(shapes(recorded('error.stdout.jsonl')));
  });

  it('parses to text, session and usage like the real output', () => {
    const parsed = parse(fake({ FAKE_AGENT_TEXT: 'hi' }));
    expect(parsed).toMatchObject({ text: 'hi', isError: false, usage: { inputTokens: 6, outputTokens: 2 } });
    expect(parsed?.sessionId).toMatch(/^ses_/);
    expect(parse(fake({ FAKE_AGENT_IS_ERROR: '1' }), 1)).toMatchObject({
      isError: true,
      errorMessage: 'No API key for provider',
    });
  });
});
