import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FAKE_BIN_DIR, makeTempDir } from '../../../test/fakes/fake-cli-harness.js';
import type { AgentRunEvent } from '../agent-runner.js';
import type { ParsedOutput } from '../cli/cli-backend.js';
import { parseJsonLine } from '../cli/json-line.js';
import { CopilotOutputParser } from './copilot-output.js';

// Real output of copilot 1.0.102 against the local model endpoint (BYOK, Chat Completions), recorded
// with the backend's own flags; see test/fakes/recorded/copilot/README.md.
const RECORDED = fileURLToPath(new URL('../../../test/fakes/recorded/copilot/', import.meta.url));
const run = promisify(execFile);

function recorded(name: string): string {
  return readFileSync(join(RECORDED, name), 'utf8');
}

function parse(stdout: string, usageFile?: string, resumedSessionId?: string): ParsedOutput | null {
  const parser = new CopilotOutputParser({
    ...(usageFile !== undefined && { usageFile }),
    ...(resumedSessionId !== undefined && { resumedSessionId }),
  });
  for (const line of stdout.split('\n')) parser.onLine(line, 'stdout');
  return parser.finish({ stdout, stderr: '', exitCode: 0 });
}

function events(stdout: string): AgentRunEvent[] {
  const parser = new CopilotOutputParser();
  return stdout.split('\n').flatMap((line) => parser.onLine(line, 'stdout'));
}

function eventTypes(stdout: string): Set<string> {
  const types = new Set<string>();
  for (const line of stdout.split('\n')) {
    const event = parseJsonLine(line);
    if (typeof event === 'object' && event !== null && 'type' in event && typeof event.type === 'string')
      types.add(event.type);
  }
  return types;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('copilot parser on recorded real output', () => {
  it('reads the reply, the session id and the usage file of a reply turn', () => {
    expect(parse(recorded('reply.stdout.jsonl'), join(RECORDED, 'reply.usage.json'))).toEqual({
      text: 'hello from the endpoint',
      isError: false,
      sessionId: expect.stringMatching(UUID),
      usage: { inputTokens: 12377, outputTokens: 6, costUsd: 0 },
    });
  });

  it('reads the final text after the tool call and both requests of a tool turn', () => {
    expect(parse(recorded('tool.stdout.jsonl'), join(RECORDED, 'tool.usage.json'))).toEqual({
      text: 'Done.',
      isError: false,
      sessionId: expect.stringMatching(UUID),
      usage: { inputTokens: 24857, outputTokens: 18, costUsd: 0 },
    });
  });

  it('reports the API error message of a failed turn', () => {
    expect(parse(recorded('error.stdout.jsonl'))).toMatchObject({
      isError: true,
      errorMessage: '400 the model says no',
    });
  });

  it('holds session totals in the usage file of a resumed turn (two requests, not one)', () => {
    const total: unknown = JSON.parse(recorded('resume.usage.json'));
    expect(total).toMatchObject({ modelMetrics: { 'gpt-5.2': { requests: { count: 2 } } } });
  });
});

describe('copilot progress events on recorded real output', () => {
  it('reports the create call of a recorded tool turn from tool.execution_start and its result', () => {
    const path = '/tmp/musubi-real-cli-rec/work/a.txt';
    const got = events(recorded('tool.stdout.jsonl')).filter((e) => e.type !== 'session');
    expect(got).toEqual([
      {
        type: 'tool',
        callId: 'call_d927a738fc85454fbccde9a4',
        name: 'create',
        kind: 'edit',
        summary: path,
        input: JSON.stringify({ path, file_text: 'hi\n' }),
      },
      {
        type: 'tool_result',
        callId: 'call_d927a738fc85454fbccde9a4',
        isError: false,
        output: `Created file ${path} with 3 characters`,
      },
      { type: 'message', text: 'Done.' },
    ]);
  });

  it('reports the failed model call and the session error of a recorded API error', () => {
    expect(events(recorded('error.stdout.jsonl')).filter((e) => e.type === 'error')).toEqual([
      { type: 'error', message: 'model call failed (HTTP 400): the model says no' },
      { type: 'error', message: '400 the model says no' },
    ]);
  });
});

describe('fake copilot output matches the recorded shape', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
  afterEach(() => cleanup());

  async function fake(env: Record<string, string> = {}): Promise<{ stdout: string; usageFile: string }> {
    const usageFile = join(dir, 'usage.json');
    const args = [
      '--output-format',
      'json',
      '--allow-all-tools',
      '--no-ask-user',
      '--usage-output-file',
      usageFile,
    ];
    const child = run(join(FAKE_BIN_DIR, 'copilot'), args, { env: { ...process.env, ...env } });
    child.child.stdin?.end('hello fake');
    try {
      return { stdout: (await child).stdout, usageFile };
    } catch (err) {
      // A failing fake exits 1; its stdout is what matters here.
      const stdout = err instanceof Error && 'stdout' in err ? err.stdout : '';
      return { stdout: typeof stdout === 'string' ? stdout : '', usageFile };
    }
  }

  it('gives the parser the same fields as the real reply turn', async () => {
    const { stdout, usageFile } = await fake({ FAKE_AGENT_TEXT: 'hello from the endpoint' });
    expect(parse(stdout, usageFile)).toEqual({
      text: 'hello from the endpoint',
      isError: false,
      sessionId: expect.stringMatching(UUID),
      usage: { inputTokens: 10, outputTokens: 23, costUsd: 0 },
    });
  });

  it('prints only event types the real CLI prints, with no usage on stdout', async () => {
    const real = new Set([
      ...eventTypes(recorded('reply.stdout.jsonl')),
      ...eventTypes(recorded('error.stdout.jsonl')),
    ]);
    const ok = eventTypes((await fake()).stdout);
    const failed = eventTypes((await fake({ FAKE_AGENT_IS_ERROR: '1' })).stdout);
    expect([...ok, ...failed].filter((t) => !real.has(t))).toEqual([]);
    expect(ok.has('assistant.usage')).toBe(false);
  });

  it('reports an error the real way when asked to fail', async () => {
    expect(parse((await fake({ FAKE_AGENT_IS_ERROR: '1' })).stdout)).toMatchObject({
      isError: true,
      errorMessage: 'No authentication information found',
    });
  });
});
