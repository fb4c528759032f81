import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CliTurn, ParsedOutput, SessionMemory } from '../cli/cli-backend.js';
import { CodexOutputParser } from './codex-output.js';

const THREAD = '01a23341-4394-7f23-a242-f371ad57896e';

function memory(): SessionMemory & { values: Map<string, unknown> } {
  const values = new Map<string, unknown>();
  return { values, get: (id) => values.get(id), set: (id, v) => void values.set(id, v) };
}

function turn(over: Partial<CliTurn> = {}): CliTurn {
  return { prompt: 'p', cwd: '/w', scratchDir: '/s', childEnv: {}, isRoot: false, settings: {}, ...over };
}

function jsonl(events: readonly unknown[]): string {
  return events.map((e) => JSON.stringify(e)).join('\n');
}

function parse(stdout: string, t: CliTurn = turn(), mem: SessionMemory = memory()): ParsedOutput | null {
  const parser = new CodexOutputParser({ turn: t, memory: mem });
  for (const line of stdout.split('\n')) parser.onLine(line, 'stdout');
  return parser.finish({ stdout, stderr: '', exitCode: 0 });
}

const started = { type: 'thread.started', thread_id: THREAD };
const usage = (input: number, output: number) => ({
  type: 'turn.completed',
  usage: { input_tokens: input, cached_input_tokens: 0, output_tokens: output },
});
const reply = (text: string) => ({
  type: 'item.completed',
  item: { id: 'item_0', type: 'agent_message', text },
});

describe('codex output parser: failures', () => {
  it('reports success when a retried stream error is followed by turn.completed', () => {
    const stdout = jsonl([
      started,
      { type: 'turn.started' },
      { type: 'error', message: 'Reconnecting... 1/5 (stream disconnected before completion)' },
      reply('after cut'),
      usage(11, 3),
    ]);
    const parsed = parse(stdout);
    expect(parsed).toMatchObject({ text: 'after cut', isError: false });
    expect(parsed?.errorMessage).toBeUndefined();
  });

  it('reports failure with the error text when no turn.completed follows an error', () => {
    const stdout = jsonl([started, { type: 'turn.started' }, { type: 'error', message: 'quota exceeded' }]);
    expect(parse(stdout)).toMatchObject({
      isError: true,
      errorMessage: 'quota exceeded',
      text: 'quota exceeded',
    });
  });

  it('takes the API message out of a turn.failed that carries the raw error body', () => {
    const body = JSON.stringify({
      error: { message: 'bad thing here', type: 'invalid_request_error', code: null },
    });
    const stdout = jsonl([
      started,
      { type: 'turn.started' },
      { type: 'error', message: body },
      { type: 'turn.failed', error: { message: body } },
    ]);
    expect(parse(stdout)).toMatchObject({ isError: true, errorMessage: 'bad thing here' });
  });

  it('keeps a plain turn.failed message as the error message', () => {
    const message = 'unexpected status 401 Unauthorized: key is wrong, url: http://127.0.0.1:1/v1/responses';
    const stdout = jsonl([started, { type: 'turn.failed', error: { message } }]);
    expect(parse(stdout)).toMatchObject({ isError: true, errorMessage: message });
  });
});

describe('codex output parser: usage of this turn', () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'musubi-codex-home-'));
  });
  afterEach(() => rm(home, { recursive: true, force: true }));

  it('reports the total of a new thread and remembers it', () => {
    const mem = memory();
    expect(parse(jsonl([started, { type: 'turn.started' }, usage(22, 4)]), turn(), mem)?.usage).toEqual({
      inputTokens: 22,
      outputTokens: 4,
      costUsd: 0,
    });
    expect(mem.values.get(THREAD)).toEqual({ inputTokens: 22, outputTokens: 4 });
  });

  it('subtracts the remembered total when the thread is resumed by the same runner', () => {
    const mem = memory();
    mem.set(THREAD, { inputTokens: 22, outputTokens: 4 });
    const parsed = parse(
      jsonl([started, { type: 'turn.started' }, usage(33, 6)]),
      turn({ sessionId: THREAD }),
      mem,
    );
    expect(parsed?.usage).toEqual({ inputTokens: 11, outputTokens: 2, costUsd: 0 });
    expect(mem.values.get(THREAD)).toEqual({ inputTokens: 33, outputTokens: 6 });
  });

  it('reads the earlier total from the rollout file when the runner has no memory of the thread', async () => {
    const dir = join(home, 'sessions', '2026', '12', '01');
    await mkdir(dir, { recursive: true });
    const tokens = (input: number, output: number) => ({
      type: 'event_msg',
      payload: {
        type: 'token_count',
        info: { total_token_usage: { input_tokens: input, output_tokens: output } },
      },
    });
    const task = { type: 'event_msg', payload: { type: 'task_started' } };
    const rollout = jsonl([
      { type: 'session_meta', payload: {} },
      task,
      tokens(9, 1),
      tokens(22, 4),
      task,
      tokens(33, 6),
    ]);
    await writeFile(join(dir, `rollout-2026-12-01T20-17-24-${THREAD}.jsonl`), `${rollout}\n`);
    const resumed = turn({ sessionId: THREAD, childEnv: { CODEX_HOME: home } });
    const parsed = parse(jsonl([started, { type: 'turn.started' }, usage(33, 6)]), resumed);
    expect(parsed?.usage).toEqual({ inputTokens: 11, outputTokens: 2, costUsd: 0 });
  });

  it('reports the thread total when a resumed thread has neither memory nor rollout', () => {
    const resumed = turn({ sessionId: THREAD, childEnv: { CODEX_HOME: home } });
    expect(parse(jsonl([started, usage(33, 6)]), resumed)?.usage).toEqual({
      inputTokens: 33,
      outputTokens: 6,
      costUsd: 0,
    });
  });
});
