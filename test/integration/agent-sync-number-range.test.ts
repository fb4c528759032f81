import { spawnSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ITEM_HEADER } from '../../src/gateways/agent-sync/mail-item.js';
import { LineClient, startServer, type TestServer } from '../fixtures/agent-sync-harness.js';

const OUT_OF_RANGE =
  '{"ok": false, "error": "Invalid JSON: number out of range (integers up to 4300 digits, finite floats)"}';

/**
 * Parses each line with python3's json.loads twice: with its defaults (as the original clients and hooks
 * do) and strictly (NaN/Infinity refused). Returns the lines either refused, with the reason.
 */
function pythonRefuses(lines: readonly string[]): string[] {
  const script = [
    'import json, sys',
    'def strict(token): raise ValueError("non-standard token " + token)',
    'bad = []',
    'for line in sys.stdin.read().split("\\n"):',
    '    if not line: continue',
    '    try:',
    '        json.loads(line); json.loads(line, parse_constant=strict)',
    '    except Exception as e:',
    '        bad.append(repr(e)[:200])',
    'print(json.dumps(bad))',
  ].join('\n');
  const run = spawnSync('python3', ['-c', script], {
    input: lines.join('\n'),
    encoding: 'utf8',
    timeout: 20_000,
  });
  if (run.status !== 0) throw new Error(`python3 failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as string[];
}

describe('agent-sync wire - numbers no client could read back', () => {
  let server: TestServer;
  beforeEach(async () => (server = await startServer()));
  afterEach(() => server.close());

  it('refuses integers past 4300 digits and overflowing floats, so every later reply parses in Python', async () => {
    const client = await LineClient.open(server.port);
    const replies: string[] = [];
    const say = async (line: string): Promise<string> => {
      client.write(`${line}\n`);
      const reply = (await client.next()) ?? '';
      replies.push(reply);
      return reply;
    };
    const huge = '9'.repeat(4301);
    const attempts = [
      `{"cmd": "send", "from": "agent-a", "to": "agent-b", "message": ${huge}}`,
      `{"cmd": "send", "from": "agent-a", "to": "agent-b", "message": -${huge}}`,
      '{"cmd": "send", "from": "agent-a", "to": "agent-b", "message": 1e400}',
      '{"cmd": "test-result", "agent": "agent-a", "passed": true, "output": [-1.5e999]}',
      `{"cmd": "discuss", "agent": "agent-a", "message": {"n": ${huge}}}`,
      `{"cmd": "status", "pad": ${huge}}`,
    ];
    for (const line of attempts) expect(await say(line)).toBe(OUT_OF_RANGE);
    // The limits themselves are fine: 4300 digits, the largest finite float, an underflow to 0.
    const edge = `{"cmd": "send", "from": "agent-a", "to": "agent-b", "message": [${'9'.repeat(4300)}, 1.7976931348623157e308, 1e-400]}`;
    expect(JSON.parse(await say(edge))).toMatchObject({ ok: true });
    // Mail another gateway stored as a JSON item with such a number is shown as text, never as the raw token.
    await server.bus.send({
      from: 'agent-c',
      to: 'agent-b',
      type: 'message',
      body: `{"from": "agent-c", "message": ${huge}, "inf": 1e400}`,
      headers: { [ITEM_HEADER]: 'json' },
    });
    await say('{"cmd": "status"}');
    await say('{"cmd": "get-discussion"}');
    const listen = await say('{"cmd": "listen", "agent": "agent-b", "timeout": 1}');
    expect(JSON.parse(listen)).toMatchObject({ ok: true });
    const messages = (JSON.parse(listen) as { messages: Array<Record<string, unknown>> }).messages;
    expect(messages).toHaveLength(2);
    expect(messages[1]).toMatchObject({ from: 'agent-c', type: 'message' });
    expect(String(messages[1]?.['text'])).toContain('1e400');
    expect(pythonRefuses(replies)).toEqual([]);
    client.destroy();
  });
});
