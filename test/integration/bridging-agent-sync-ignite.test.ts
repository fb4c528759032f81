import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { stop as stopEsbuild } from 'esbuild';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runSendTool } from '../../src/cli/ignite/send-tool.js';
import { BodyFields } from '../../src/gateways/ignite/body-fields.js';
import { parseMime } from '../../src/gateways/ignite/mime/mime-parse.js';
import { waitFor } from '../fixtures/agent-sync-harness.js';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';
import { startBridgingHub, type BridgingHub } from '../fixtures/bridging-hub.js';
import { runTool } from '../fixtures/ignite-tool-io.js';
import { expectNoLiveChildren } from '../fixtures/process-children.js';

const TASK = 'task_id: "task_001"\ntitle: "greet"\ndescription: |\n  write hello.txt hi\n';

describe('bridging agent_sync <-> IGNITE', () => {
  let h: BridgingHub | undefined;
  let cli: BundledCli;
  /** Files the IGNITE agents were given, read at the start of each turn. */
  let delivered: Array<{ agent: string; text: string }>;

  const start = async (agents: readonly string[]): Promise<BridgingHub> => {
    h = await startBridgingHub({ agents });
    delivered = [];
    h.ignite.behaviour = (turn) => {
      delivered.push({ agent: turn.agent, text: readFileSync(turn.file, 'utf8') });
      return {};
    };
    return h;
  };
  /** Sends a message with IGNITE's own send tool, in process, body on stdin. */
  const igniteSend = async (hub: BridgingHub, argv: string[], body: string): Promise<string> => {
    const run = await runTool(runSendTool, [...argv, '--body-file', '-'], {
      cwd: hub.ws.workspace,
      env: { WORKSPACE_DIR: hub.ws.workspace },
      input: body,
    });
    expect(run).toMatchObject({ code: 0, stderr: '' });
    return run.stdout.replace(/^✓ メッセージを送信しました: /, '').trim();
  };

  beforeAll(async () => {
    cli = await bundleCli();
  });
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });
  afterAll(async () => {
    await cli.remove();
    await stopEsbuild(); // bundleCli's esbuild service is a child process too
    await expectNoLiveChildren();
  });

  it('delivers an IGNITE task_assignment to an agent_sync peer through listen, as its YAML text', async () => {
    const hub = await start(['coordinator', 'ignitian_2']);
    expect(await hub.ask({ cmd: 'join', agent: 'ignitian_2' })).toMatchObject({ ok: true });
    expect((await hub.directory.get('ignitian_2'))?.protocol).toBe('agent-sync');
    const listening = hub.ask({ cmd: 'listen', agent: 'ignitian_2', timeout: 30 }, 40_000);
    const path = await igniteSend(hub, ['task_assignment', 'coordinator', 'ignitian_2'], TASK);

    expect(await listening).toEqual({
      ok: true,
      messages: [{ from: 'coordinator', type: 'task_assignment', text: TASK, ts: expect.any(Number) }],
      timeout: false,
    });
    // The file was handed to the bus: moved to processed/ and marked delivered; no IGNITE turn ran.
    const processed = join(hub.ws.processed('ignitian_2'), basename(path));
    await waitFor(
      async () => /X-IGNITE-Status: delivered/.test(await readFile(processed, 'utf8').catch(() => '')),
      15_000,
    );
    expect(hub.ignite.turnsOf('ignitian_2')).toEqual([]);
  });

  it("turns an agent_sync peer's send to an IGNITE agent into a MIME file with its YAML text as the body", async () => {
    const hub = await start(['coordinator', 'ignitian_2']);
    await hub.ask({ cmd: 'join', agent: 'ignitian_2' });
    const text = 'task_id: "task_001"\ntitle: "greet"\nresult: "done"\n';
    const reply = { cmd: 'send', agent: 'ignitian_2', to: 'coordinator', msg_type: 'task_completed', text };
    expect(await hub.ask(reply)).toMatchObject({ ok: true });

    await waitFor(() => delivered.length === 1, 15_000);
    const file = parseMime(delivered[0]?.text ?? '');
    expect(delivered[0]?.agent).toBe('coordinator');
    expect(Object.fromEntries(file.headers)).toMatchObject({
      From: 'ignitian_2',
      To: 'coordinator',
      'X-IGNITE-Type': 'task_completed',
      'X-IGNITE-Priority': 'normal',
    });
    expect(file.body).toBe(text);
    expect(new BodyFields(file.body).get('result')).toBe('done');
  });

  it('gives an ignitian a MIME file for a message sent with musubi agent-sync send', async () => {
    const hub = await start(['alice', 'ignitian_1']);
    const text = 'please run the tests\nand report: failures only';
    const run = await cli.run(
      ['agent-sync', 'send', 'alice', 'ignitian_1', text, '--port', String(hub.port)],
      {
        cwd: hub.ws.workspace,
      },
    );
    expect(run).toMatchObject({ code: 0 });

    await waitFor(() => delivered.length === 1, 15_000);
    const file = parseMime(delivered[0]?.text ?? '');
    expect(delivered[0]?.agent).toBe('ignitian_1');
    expect(Object.fromEntries(file.headers)).toMatchObject({
      From: 'alice',
      To: 'ignitian_1',
      'X-IGNITE-Type': 'message',
    });
    // Plain text becomes body field `message` of a YAML body, and reads back exactly.
    expect(parse(file.body)).toEqual({ message: text });
  });

  it('hands an IGNITE agent that joins agent_sync its later messages through listen instead of a turn', async () => {
    const hub = await start(['coordinator', 'ignitian_1']);
    await igniteSend(hub, ['task_assignment', 'coordinator', 'ignitian_1'], TASK);
    await waitFor(() => delivered.length === 1, 15_000);
    expect(delivered[0]?.agent).toBe('ignitian_1');

    await hub.ask({ cmd: 'join', agent: 'ignitian_1' });
    const second = TASK.replace('task_001', 'task_002');
    await igniteSend(hub, ['task_assignment', 'coordinator', 'ignitian_1'], second);
    const reply = await hub.ask({ cmd: 'listen', agent: 'ignitian_1', timeout: 30 }, 40_000);
    expect(reply).toMatchObject({
      messages: [{ from: 'coordinator', type: 'task_assignment', text: second }],
    });
    expect(hub.ignite.turnsOf('ignitian_1')).toHaveLength(1);
  });
});
