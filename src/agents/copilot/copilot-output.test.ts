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
