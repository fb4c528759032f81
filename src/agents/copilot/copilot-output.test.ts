import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '../../../test/fakes/fake-cli-harness.js';
import type { SessionMemory } from '../cli/cli-backend.js';
import { CopilotOutputParser } from './copilot-output.js';
import { readSessionTotals, readUsageFile, sessionEventsFile } from './copilot-usage.js';

const SESSION = 'e8142bb8-5823-482d-bfaa-233ebdfcf31d';

/** The accounting snapshot copilot 1.0.102 writes (trimmed to what matters, shape as recorded). */
function snapshot(models: Record<string, [number, number]>): Record<string, unknown> {
  const modelMetrics: Record<string, unknown> = {};
  for (const [model, [inputTokens, outputTokens]] of Object.entries(models)) {
    modelMetrics[model] = {
      requests: { count: 1, cost: 0 },
      usage: { inputTokens, outputTokens, cacheReadTokens: 0, cacheWriteTokens: 0 },
      totalNanoAiu: 0,
    };
  }
  return { totalPremiumRequestCost: 0, totalUserRequests: 1, modelMetrics, currentModel: 'gpt-5.2' };
}

function line(event: Record<string, unknown>): string {
  return JSON.stringify(event);
}

function memory(): SessionMemory & { values: Map<string, unknown> } {
  const values = new Map<string, unknown>();
  return { values, get: (id) => values.get(id), set: (id, v) => void values.set(id, v) };
}

const output = { stdout: '', stderr: '', exitCode: 0 };

describe('copilot output parser', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
  afterEach(() => cleanup());

  it('takes the session id from the final result line when no event carries it in data', () => {
    const parser = new CopilotOutputParser();
    parser.onLine(line({ type: 'assistant.message', data: { content: 'hi', toolRequests: [] } }), 'stdout');
    const events = parser.onLine(line({ type: 'result', sessionId: SESSION, exitCode: 0 }), 'stdout');
    expect(events).toEqual([{ type: 'session', sessionId: SESSION }]);
    expect(parser.finish(output)).toMatchObject({ text: 'hi', sessionId: SESSION, isError: false });
  });

  it('reports the session.error message as errorMessage when the API fails', () => {
    const parser = new CopilotOutputParser();
    parser.onLine(
      line({
        type: 'session.error',
        data: { errorType: 'query', message: '400 bad thing', statusCode: 400 },
      }),
      'stdout',
    );
    parser.onLine(line({ type: 'result', sessionId: SESSION, exitCode: 1 }), 'stdout');
    expect(parser.finish({ ...output, exitCode: 1 })).toMatchObject({
      isError: true,
      errorMessage: '400 bad thing',
      text: '400 bad thing',
    });
  });

  it('is an error when the result line has a non-zero exit code and no session.error', () => {
    const parser = new CopilotOutputParser();
    parser.onLine(line({ type: 'result', sessionId: SESSION, exitCode: 1 }), 'stdout');
    expect(parser.finish(output)?.isError).toBe(true);
  });

  it('reads the usage of a new session from the usage file, summed over models', async () => {
    const usageFile = join(dir, 'usage.json');
    await writeFile(usageFile, JSON.stringify(snapshot({ 'gpt-5.2': [101, 11], 'gpt-5-mini': [7, 3] })));
    const parser = new CopilotOutputParser({ usageFile });
    parser.onLine(line({ type: 'result', sessionId: SESSION, exitCode: 0 }), 'stdout');
    expect(parser.finish(output)?.usage).toEqual({ inputTokens: 108, outputTokens: 14, costUsd: 0 });
  });

  it('subtracts the totals of the last session.shutdown in the events file when resuming', async () => {
    const home = join(dir, '.copilot');
    const events = sessionEventsFile(home, SESSION);
    await mkdir(join(events, '..'), { recursive: true });
    const shutdown = {
      type: 'session.shutdown',
      data: { accountingSnapshot: snapshot({ 'gpt-5.2': [101, 11] }) },
    };
    await writeFile(
      events,
      `${line({ type: 'session.start', data: { sessionId: SESSION } })}\n${line(shutdown)}\n`,
    );
    const usageFile = join(dir, 'usage.json');
    const parser = new CopilotOutputParser({ usageFile, copilotHome: home, resumedSessionId: SESSION });
    // The CLI runs after the parser exists: it appends to the events file and writes session totals.
    await writeFile(events, `${line(shutdown)}\n${line({ type: 'session.resume', data: {} })}\n`, {
      flag: 'a',
    });
    await writeFile(usageFile, JSON.stringify(snapshot({ 'gpt-5.2': [303, 33] })));
    parser.onLine(line({ type: 'result', sessionId: SESSION, exitCode: 0 }), 'stdout');
    expect(parser.finish(output)?.usage).toEqual({ inputTokens: 202, outputTokens: 22, costUsd: 0 });
  });

  it('subtracts the totals remembered after the previous turn when the events file is missing', async () => {
    const usageFile = join(dir, 'usage.json');
    const mem = memory();
    mem.set(SESSION, { inputTokens: 100, outputTokens: 10 });
    await writeFile(usageFile, JSON.stringify(snapshot({ 'gpt-5.2': [250, 25] })));
    const parser = new CopilotOutputParser({ usageFile, memory: mem, resumedSessionId: SESSION });
    parser.onLine(line({ type: 'result', sessionId: SESSION, exitCode: 0 }), 'stdout');
    expect(parser.finish(output)?.usage).toEqual({ inputTokens: 150, outputTokens: 15, costUsd: 0 });
    expect(mem.values.get(SESSION)).toEqual({ inputTokens: 250, outputTokens: 25 });
  });

  it('reports no usage when resuming a session whose earlier totals are unknown', async () => {
    const usageFile = join(dir, 'usage.json');
    await writeFile(usageFile, JSON.stringify(snapshot({ 'gpt-5.2': [250, 25] })));
    const parser = new CopilotOutputParser({ usageFile, memory: memory(), resumedSessionId: SESSION });
    parser.onLine(line({ type: 'result', sessionId: SESSION, exitCode: 0 }), 'stdout');
    expect(parser.finish(output)?.usage).toBeUndefined();
  });

  it('reports no usage when the usage file is missing or half written', async () => {
    const usageFile = join(dir, 'usage.json');
    const parser = new CopilotOutputParser({ usageFile });
    parser.onLine(line({ type: 'result', sessionId: SESSION, exitCode: 0 }), 'stdout');
    expect(parser.finish(output)?.usage).toBeUndefined();
    await writeFile(usageFile, '{"modelMetrics":');
    expect(readUsageFile(usageFile)).toBeUndefined();
  });

  it('never reads an events file outside the copilot home for a session id with a slash', async () => {
    const home = join(dir, 'home');
    await mkdir(join(dir, 'evil'), { recursive: true });
    const shutdown = { type: 'session.shutdown', data: { accountingSnapshot: snapshot({ m: [1, 1] }) } };
    await writeFile(join(dir, 'evil', 'events.jsonl'), `${line(shutdown)}\n`);
    expect(readSessionTotals(sessionEventsFile(home, '../../evil'))).toBeDefined();
    const usageFile = join(dir, 'usage.json');
    await writeFile(usageFile, JSON.stringify(snapshot({ m: [5, 5] })));
    const parser = new CopilotOutputParser({ usageFile, copilotHome: home, resumedSessionId: '../../evil' });
    expect(parser.finish({ ...output })).toBeNull();
    parser.onLine(line({ type: 'result', exitCode: 0 }), 'stdout');
    expect(parser.finish(output)?.usage).toBeUndefined();
  });
});

describe('copilot output parser: progress events', () => {
  const events = (lines: readonly Record<string, unknown>[]) => {
    const parser = new CopilotOutputParser();
    return lines.flatMap((l) => parser.onLine(line(l), 'stdout'));
  };

  it('reports a bash call as a command tool and a failed completion with its error message', () => {
    const data = {
      toolCallId: 'call_1',
      toolName: 'bash',
      arguments: { command: 'npm test', description: 'Run tests' },
    };
    const got = events([
      { type: 'tool.execution_start', data: { ...data, turnId: '0', toolTitle: 'Running tests' } },
      {
        type: 'tool.execution_complete',
        data: {
          toolCallId: 'call_1',
          success: false,
          error: { message: 'The command timed out', code: 'failure' },
        },
      },
    ]);
    expect(got).toEqual([
      {
        type: 'tool',
        callId: 'call_1',
        name: 'bash',
        kind: 'command',
        summary: 'npm test',
        input: JSON.stringify(data.arguments),
      },
      { type: 'tool_result', callId: 'call_1', isError: true, output: 'The command timed out' },
    ]);
  });

  it('classifies view, edit, grep and web_fetch calls', () => {
    const start = (toolName: string, args: Record<string, unknown>) => ({
      type: 'tool.execution_start',
      data: { toolCallId: toolName, toolName, arguments: args },
    });
    const got = events([
      start('view', { path: '/w/a.ts' }),
      start('edit', { path: '/w/a.ts', old_str: 'a', new_str: 'b' }),
      start('grep', { pattern: 'TODO', path: '/w' }),
      start('web_fetch', { url: 'https://example.com' }),
    ]);
    expect(got.map((e) => (e.type === 'tool' ? `${e.kind} ${e.summary}` : e.type))).toEqual([
      'read /w/a.ts',
      'edit /w/a.ts',
      'search TODO',
      'web https://example.com',
    ]);
  });

  it('reports a failed model call with the API message taken out of its body', () => {
    const failure = {
      type: 'model.call_failure',
      data: {
        statusCode: 429,
        retryAttempt: 1,
        errorMessage: JSON.stringify({ message: 'rate limited', type: 'rate_limit' }),
      },
    };
    expect(events([failure])).toEqual([
      { type: 'error', message: 'model call failed (HTTP 429): rate limited' },
    ]);
  });

  it('keeps reading a tool line whose fields have unexpected types', () => {
    const odd = { type: 'tool.execution_complete', data: { toolCallId: 7, success: 'yes', result: 'x' } };
    expect(events([odd])).toEqual([{ type: 'tool_result', isError: false, output: '' }]);
  });
});
