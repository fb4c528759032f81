import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fakeParentEnv } from '../../../test/fakes/fake-cli-harness.js';
import { CliAgentRunner } from '../cli/cli-agent-runner.js';
import type { AgentRunEvent } from '../agent-runner.js';
import type { CliTurn, ParsedOutput, SessionMemory } from '../cli/cli-backend.js';
import { codexBackend } from './codex-backend.js';
import { CodexOutputParser } from './codex-output.js';

// Real stdout of codex 0.171.0 `exec --json` against the model endpoint (the wiring of codex-wiring.ts;
// ws-fallback: the built-in provider through OPENAI_BASE_URL, refused websockets, then HTTP).
const recordedDir = new URL('../../../test/fakes/recorded/codex/', import.meta.url);
const fakeCodex = fileURLToPath(new URL('../../../test/fakes/bin/codex', import.meta.url));

function recorded(name: string): string {
  return readFileSync(new URL(name, recordedDir), 'utf8');
}

function memory(): SessionMemory {
  const values = new Map<string, unknown>();
  return { get: (id) => values.get(id), set: (id, v) => void values.set(id, v) };
}

function parse(
  stdout: string,
  over: Partial<CliTurn> = {},
  mem: SessionMemory = memory(),
): ParsedOutput | null {
  const turn: CliTurn = {
    prompt: 'p',
    cwd: '/w',
    scratchDir: '/s',
    childEnv: {},
    isRoot: true,
    settings: {},
    ...over,
  };
  const parser = new CodexOutputParser({ turn, memory: mem });
  for (const line of stdout.split('\n')) parser.onLine(line, 'stdout');
  return parser.finish({ stdout, stderr: '', exitCode: 0 });
}

function events(stdout: string): AgentRunEvent[] {
  const turn: CliTurn = {
    prompt: 'p',
    cwd: '/w',
    scratchDir: '/s',
    childEnv: {},
    isRoot: true,
    settings: {},
  };
  const parser = new CodexOutputParser({ turn, memory: memory() });
  return stdout.split('\n').flatMap((line) => parser.onLine(line, 'stdout'));
}

function fake(env: Record<string, string> = {}): string {
  return spawnSync(
    process.execPath,
    [fakeCodex, 'exec', '--json', '--skip-git-repo-check', '-s', 'workspace-write', '-'],
    {
      input: 'say hi',
      env: { PATH: process.env['PATH'] ?? '', ...env },
      encoding: 'utf8',
    },
  ).stdout;
}

const jsonObject = z.record(z.string(), z.unknown());

/** The keys of each kind of line (`type`, `item.type`), and of its `item` / `usage` / `error`, for comparing shapes. */
function shapes(stdout: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const text of stdout.split('\n').filter((l) => l.trim() !== '')) {
    const line = jsonObject.parse(JSON.parse(text));
    const item = jsonObject.safeParse(line['item']).data;
    const kind = `${String(line['type'])}/${String(item?.['type'] ?? '')}`;
    const keys = out.get(kind) ?? new Set<string>();
    for (const k of Object.keys(line)) keys.add(k);
    for (const part of ['item', 'usage', 'error']) {
      const inner = jsonObject.safeParse(line[part]).data;
      for (const k of Object.keys(inner ?? {})) keys.add(`${part}.${k}`);
    }
    out.set(kind, keys);
  }
  return out;
}

describe('codex output parser on recorded real output', () => {
  it('reads text, session and usage from a recorded reply turn', () => {
    expect(parse(recorded('reply.stdout.jsonl'))).toEqual({
      text: 'Hello from the endpoint.',
      sessionId: '01a23349-84bf-7d32-a49d-e20173c87235',
      isError: false,
      usage: { inputTokens: 9297, outputTokens: 6, costUsd: 0 },
    });
  });

  it('reports only the resumed turn usage from a recorded resume, whose total includes the first turn', () => {
    const mem = memory();
    parse(recorded('reply.stdout.jsonl'), {}, mem);
    const sessionId = '01a23349-84bf-7d32-a49d-e20173c87235';
    // The endpoint answered 9297/6 for the first turn and 9390/4 for the second; codex said 18687/10.
    expect(parse(recorded('resumed.stdout.jsonl'), { sessionId }, mem)).toMatchObject({
      text: 'second answer',
      sessionId,
      isError: false,
      usage: { inputTokens: 9390, outputTokens: 4, costUsd: 0 },
    });
  });

  it('reads the final text of a recorded apply_patch tool turn', () => {
    expect(parse(recorded('tool.stdout.jsonl'))).toMatchObject({
      text: 'wrote it',
      isError: false,
      usage: { inputTokens: 18742, outputTokens: 21 },
    });
  });

  it('reads the final text of a recorded code-mode turn (gpt-6.2-sol, apply_patch inside exec)', () => {
    expect(parse(recorded('code-mode-tool.stdout.jsonl'))).toMatchObject({
      text: 'wrote it',
      isError: false,
      usage: { inputTokens: 30438, outputTokens: 22 },
    });
  });

  it('reports success for a recorded turn whose cut stream codex retried', () => {
    const parsed = parse(recorded('cut-retried.stdout.jsonl'));
    expect(parsed).toMatchObject({ text: 'after the cut', isError: false });
    expect(parsed?.errorMessage).toBeUndefined();
  });

  it('reports success for a recorded turn after five websocket reconnect errors and the HTTP fallback', () => {
    expect(parse(recorded('ws-fallback.stdout.jsonl'))).toMatchObject({
      text: 'hello there',
      isError: false,
    });
  });

  it('reports the API message of a recorded 400 as the error message', () => {
    expect(parse(recorded('api-error.stdout.jsonl'))).toMatchObject({
      isError: true,
      errorMessage: 'bad thing from the endpoint',
      text: 'bad thing from the endpoint',
    });
  });
});

describe('codex progress events on recorded real output', () => {
  it('reports the apply_patch file_change of a recorded tool turn as an edit, its completion and the usage', () => {
    const path = '/tmp/cx/rec/work/hello.txt';
    expect(events(recorded('tool.stdout.jsonl'))).toEqual([
      { type: 'session', sessionId: '01a23349-86f8-7b91-9156-ea2f74ff8421' },
      {
        type: 'tool',
        callId: 'item_0',
        name: 'file_change',
        kind: 'edit',
        summary: `add ${path}`,
        input: JSON.stringify({ changes: [{ path, kind: 'add' }] }),
      },
      { type: 'tool_result', callId: 'item_0', isError: false, output: `add ${path}` },
      { type: 'message', text: 'wrote it' },
      { type: 'usage', usage: { inputTokens: 18742, outputTokens: 21, costUsd: 0 } },
    ]);
  });

  it('reports the same events for the file_change of a recorded code-mode turn', () => {
    const kinds = events(recorded('code-mode-tool.stdout.jsonl')).map((e) =>
      e.type === 'tool' ? `tool:${e.kind}:${e.summary}` : e.type,
    );
    expect(kinds).toEqual([
      'session',
      'tool:edit:add /tmp/cx/rec-cm/work/hello.txt',
      'tool_result',
      'message',
      'usage',
    ]);
  });

  it('reports the reconnects and the websocket fallback of a recorded turn as errors before its answer', () => {
    const got = events(recorded('ws-fallback.stdout.jsonl')).filter((e) => e.type === 'error');
    expect(got.map((e) => e.type === 'error' && e.message.slice(0, 40))).toEqual([
      'Reconnecting... 2/5 (stream disconnected',
      'Reconnecting... 3/5 (stream disconnected',
      'Reconnecting... 4/5 (stream disconnected',
      'Reconnecting... 5/5 (stream disconnected',
      'Falling back from WebSockets to HTTPS tr',
    ]);
  });

  it('reports the API message of a recorded 400 as one error event', () => {
    expect(events(recorded('api-error.stdout.jsonl')).filter((e) => e.type === 'error')).toEqual([
      { type: 'error', message: 'bad thing from the endpoint' },
    ]);
  });
});

describe('fake codex matches the recorded real output', () => {
  it('prints a reply turn with the same event kinds and keys as the real CLI', () => {
    const real = shapes(recorded('reply.stdout.jsonl'));
    const fakeShapes = shapes(fake());
    for (const [kind, keys] of real)
      expect([kind, [...(fakeShapes.get(kind) ?? [])].sort()]).toEqual([kind, [...keys].sort()]);
    expect(parse(fake())).toMatchObject({
      text: 'echo: say hi',
      isError: false,
      usage: { inputTokens: 6, outputTokens: 12 },
    });
  });

  it('prints a failed turn with the same event kinds and keys as the real CLI', () => {
    const real = shapes(recorded('api-error.stdout.jsonl'));
    const fakeShapes = shapes(fake({ FAKE_AGENT_IS_ERROR: '1' }));
    expect([...fakeShapes.keys()].sort()).toEqual([...real.keys()].sort());
    for (const [kind, keys] of real)
      expect([kind, [...(fakeShapes.get(kind) ?? [])].sort()]).toEqual([kind, [...keys].sort()]);
  });

  it('prints a transient reconnect error before a successful turn, which is no failure', () => {
    const stdout = fake({ FAKE_CODEX_RECONNECT: '1' });
    expect(stdout).toContain('Reconnecting... 1/5');
    expect(parse(stdout)).toMatchObject({ text: 'echo: say hi', isError: false });
  });
});

describe('fake codex session totals', () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'musubi-fake-codex-home-'));
  });
  afterEach(() => rm(home, { recursive: true, force: true }));

  it('reports each turn usage on resume, from memory and from the rollout after a restart', async () => {
    const options = { backend: codexBackend, env: fakeParentEnv({ CODEX_HOME: home }) };
    const runner = new CliAgentRunner(options);
    const first = await runner.run({ prompt: 'one', cwd: home, timeoutMs: 10_000 });
    expect(first.usage).toEqual({ inputTokens: 3, outputTokens: 9, costUsd: 0 });
    const sessionId = first.sessionId ?? '';
    const second = await runner.run({ prompt: 'second', cwd: home, sessionId, timeoutMs: 10_000 });
    expect(second.usage).toEqual({ inputTokens: 6, outputTokens: 12, costUsd: 0 });
    const third = await new CliAgentRunner(options).run({
      prompt: 'three',
      cwd: home,
      sessionId,
      timeoutMs: 10_000,
    });
    expect(third.usage).toEqual({ inputTokens: 5, outputTokens: 11, costUsd: 0 });
  });
});
