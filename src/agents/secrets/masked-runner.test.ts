import { describe, expect, it } from 'vitest';
import { FakeAgentRunner } from '../../../test/fakes/fake-agent-runner.js';
import { isMusubiError, MusubiError } from '../../core/errors.js';
import { SecretMask } from '../../core/secret-mask.js';
import type { AgentRunEvent } from '../agent-runner.js';
import { withSecretMask } from './masked-runner.js';

const KEY = 'sk-ant-FAKE1234567890abcdef';
const mask = new SecretMask([KEY]);
const turn = { prompt: `use ${KEY}`, cwd: '/tmp', timeoutMs: 1000 };

describe('secret-masked runner', () => {
  it('masks every event and every string of the result; the agent gets the prompt as it is', async () => {
    const inner = new FakeAgentRunner((input) => {
      input.onEvent?.({ type: 'started', pid: 1, argv: ['claude', '-p', input.prompt] });
      input.onEvent?.({ type: 'line', stream: 'stderr', line: `401 invalid x-api-key ${KEY}` });
      input.onEvent?.({ type: 'message', text: `my key is ${KEY}` });
      input.onEvent?.({
        type: 'tool',
        name: 'Bash',
        kind: 'command',
        summary: `echo ${KEY}`,
        input: `{"c":"${KEY}"}`,
      });
      input.onEvent?.({ type: 'tool_result', isError: false, output: KEY });
      input.onEvent?.({ type: 'error', message: `API Error: 401 ${KEY}` });
      input.onEvent?.({ type: 'waiting', question: `send ${KEY}?` });
      return {
        text: `reply ${KEY}`,
        isError: true,
        exitCode: 1,
        stderrTail: `…567890abcdef\n401 invalid x-api-key ${KEY}\n`,
        errorMessage: `401 invalid x-api-key ${KEY}`,
        usage: { inputTokens: 3, outputTokens: 4, costUsd: 0.5 },
      };
    });
    const events: AgentRunEvent[] = [];
    const result = await withSecretMask(inner, mask).run({ ...turn, onEvent: (e) => events.push(e) });
    expect(inner.inputs[0]?.prompt).toBe(`use ${KEY}`);
    expect(JSON.stringify([events, result])).not.toMatch(/FAKE|567890abcdef/);
    expect(events.map((e) => JSON.stringify(e)).every((e) => e.includes('sk-ant-…[masked]'))).toBe(true);
    expect(result).toMatchObject({
      text: 'reply sk-ant-…[masked]',
      stderrTail: '……[masked]\n401 invalid x-api-key sk-ant-…[masked]\n',
      errorMessage: '401 invalid x-api-key sk-ant-…[masked]',
      usage: { inputTokens: 3, outputTokens: 4, costUsd: 0.5 },
    });
  });

  it('masks the error a turn rejects with and keeps its code', async () => {
    const cause = new Error(`spawn failed for ${KEY}`);
    const inner = new FakeAgentRunner(() => {
      throw new MusubiError('AGENT_FAILED', `could not start with ${KEY}`, { details: { key: KEY }, cause });
    });
    const err: unknown = await withSecretMask(inner, mask)
      .run(turn)
      .catch((e: unknown) => e);
    expect(isMusubiError(err, 'AGENT_FAILED')).toBe(true);
    expect(err).toMatchObject({
      message: 'could not start with sk-ant-…[masked]',
      details: { key: 'sk-ant-…[masked]' },
    });
    expect((err as Error).cause).toBeUndefined();
    const clean = new MusubiError('AGENT_NOT_FOUND', 'no claude');
    const plain = withSecretMask(
      new FakeAgentRunner(() => {
        throw clean;
      }),
      mask,
    );
    await expect(plain.run(turn)).rejects.toBe(clean);
  });

  it('is the runner itself when there is nothing to mask', () => {
    const inner = new FakeAgentRunner();
    expect(withSecretMask(inner, new SecretMask([]))).toBe(inner);
  });
});
