import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentRunEvent } from '../agent-runner.js';
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

function events(
  lines: readonly unknown[],
  t: CliTurn = turn(),
  mem: SessionMemory = memory(),
): AgentRunEvent[] {
  const parser = new CodexOutputParser({ turn: t, memory: mem });
  return lines.flatMap((l) => parser.onLine(JSON.stringify(l), 'stdout'));
}

const item = (type: 'item.started' | 'item.completed', fields: Record<string, unknown>) => ({
  type,
  item: fields,
});

describe('codex output parser: progress events', () => {
  it('reports a command_execution as a command tool at its start and its output and exit code at completion', () => {
    const running = {
      id: 'item_1',
      type: 'command_execution',
      command: "bash -lc 'npm test'",
      aggregated_output: '',
      status: 'in_progress',
    };
    const done = { ...running, aggregated_output: '1 failing\n', exit_code: 1, status: 'failed' };
    expect(events([item('item.started', running), item('item.completed', done)])).toEqual([
      {
        type: 'tool',
        callId: 'item_1',
        name: 'command_execution',
        kind: 'command',
        summary: "bash -lc 'npm test'",
        input: JSON.stringify({ command: "bash -lc 'npm test'" }),
      },
      { type: 'tool_result', callId: 'item_1', isError: true, output: '1 failing\n[exit code 1]' },
    ]);
  });

  it('reports a successful command with its output only', () => {
    const done = {
      id: 'item_2',
      type: 'command_execution',
      command: 'ls',
      aggregated_output: 'a.txt\n',
      exit_code: 0,
      status: 'completed',
    };
    expect(
      events([item('item.started', { ...done, exit_code: null }), item('item.completed', done)])[1],
    ).toEqual({
      type: 'tool_result',
      callId: 'item_2',
      isError: false,
      output: 'a.txt\n',
    });
  });

  it('reports a file_change as an edit of its paths, also when only its completion is printed', () => {
    const change = {
      id: 'item_3',
      type: 'file_change',
      changes: [
        { path: '/w/src/a.ts', kind: 'update' },
        { path: '/w/src/b.ts', kind: 'add' },
      ],
      status: 'completed',
    };
    expect(events([item('item.completed', change)])).toEqual([
      expect.objectContaining({
        type: 'tool',
        callId: 'item_3',
        kind: 'edit',
        summary: 'update /w/src/a.ts, add /w/src/b.ts',
      }),
      {
        type: 'tool_result',
        callId: 'item_3',
        isError: false,
        output: 'update /w/src/a.ts\nadd /w/src/b.ts',
      },
    ]);
  });

  it('reports an mcp_tool_call as an other tool named server.tool with its result text or error', () => {
    const call = {
      id: 'item_4',
      type: 'mcp_tool_call',
      server: 'docs',
      tool: 'search',
      arguments: { query: 'zod' },
      status: 'in_progress',
    };
    const ok = {
      ...call,
      status: 'completed',
      result: { content: [{ type: 'text', text: 'zod 4 docs' }], structured_content: null },
    };
    const failed = { ...call, id: 'item_5', status: 'failed', error: { message: 'server exited' } };
    const got = events([
      item('item.started', call),
      item('item.completed', ok),
      item('item.completed', failed),
    ]);
    expect(got[0]).toEqual({
      type: 'tool',
      callId: 'item_4',
      name: 'docs.search',
      kind: 'other',
      summary: 'zod',
      input: '{"query":"zod"}',
    });
    expect(got[1]).toEqual({ type: 'tool_result', callId: 'item_4', isError: false, output: 'zod 4 docs' });
    expect(got.slice(2)).toEqual([
      expect.objectContaining({ type: 'tool', callId: 'item_5', name: 'docs.search' }),
      { type: 'tool_result', callId: 'item_5', isError: true, output: 'server exited' },
    ]);
  });

  it('reports a web_search as a web tool with its query', () => {
    const search = { id: 'item_6', type: 'web_search', query: 'node 20 abortsignal any' };
    expect(events([item('item.started', search), item('item.completed', search)])).toEqual([
      expect.objectContaining({
        type: 'tool',
        name: 'web_search',
        kind: 'web',
        summary: 'node 20 abortsignal any',
      }),
      { type: 'tool_result', callId: 'item_6', isError: false, output: '' },
    ]);
  });

  it('reports error events, error items and a turn.failed with a new message as errors, once each', () => {
    const body = JSON.stringify({ error: { message: 'bad thing', type: 'invalid_request_error' } });
    expect(
      events([
        { type: 'error', message: 'Reconnecting... 1/5 (stream disconnected before completion)' },
        item('item.completed', {
          id: 'item_0',
          type: 'error',
          message: 'Falling back from WebSockets to HTTPS transport.',
        }),
        { type: 'error', message: body },
        { type: 'turn.failed', error: { message: body } },
        { type: 'turn.failed', error: { message: 'something else' } },
      ]),
    ).toEqual([
      { type: 'error', message: 'Reconnecting... 1/5 (stream disconnected before completion)' },
      { type: 'error', message: 'Falling back from WebSockets to HTTPS transport.' },
      { type: 'error', message: 'bad thing' },
      { type: 'error', message: 'something else' },
    ]);
  });

  it("reports this turn's usage at turn.completed, the remembered total of a resumed thread subtracted", () => {
    const mem = memory();
    mem.set(THREAD, { inputTokens: 22, outputTokens: 4 });
    expect(events([started, usage(33, 6)], turn({ sessionId: THREAD }), mem).at(-1)).toEqual({
      type: 'usage',
      usage: { inputTokens: 11, outputTokens: 2, costUsd: 0 },
    });
    expect(events([started, usage(33, 6)]).at(-1)).toEqual({
      type: 'usage',
      usage: { inputTokens: 33, outputTokens: 6, costUsd: 0 },
    });
  });

  it('skips reasoning and todo_list items', () => {
    expect(
      events([
        item('item.completed', { id: 'r', type: 'reasoning', text: 'thinking' }),
        item('item.started', { id: 't', type: 'todo_list', items: [{ text: 'a', completed: false }] }),
      ]),
    ).toEqual([]);
  });
});
