import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runSendTool } from '../../src/cli/ignite/send-tool.js';
import { BodyFields } from '../../src/gateways/ignite/body-fields.js';
import { parseMime } from '../../src/gateways/ignite/mime/mime-parse.js';
import { originHeaders } from '../../src/gateways/bridging/origin-protocol.js';
import { waitFor } from '../fixtures/agent-sync-harness.js';
import { startBridgingHub, type BridgingHub } from '../fixtures/bridging-hub.js';
import { runTool } from '../fixtures/ignite-tool-io.js';
import { expectNoLiveChildren } from '../fixtures/process-children.js';

describe('bridging IGNITE <-> yadon', () => {
  let h: BridgingHub | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });
  afterAll(async () => {
    await expectNoLiveChildren();
  });

  it("runs an IGNITE agent's YAML task on a yadon worker and brings the result back as a MIME file", async () => {
    const hub = (h = await startBridgingHub({ agents: ['alice'] }));
    const delivered: string[] = [];
    hub.ignite.behaviour = (turn) => (delivered.push(readFileSync(turn.file, 'utf8')), {});
    // IGNITE's send tool only addresses IGNITE agents, so the coordinator's message reaches yadon through a
    // bus client (the MCP server, the dashboard): an IGNITE-shaped envelope, as a mirrored file is.
    const body =
      'task_id: "task_001"\ntitle: "greet"\ndescription: |\n  write a.txt A\n  reply wrote a.txt\n';
    await hub.bus.send({
      from: 'coordinator',
      to: 'yadon-1',
      type: 'task_assignment',
      headers: originHeaders('ignite'),
      body,
    });

    await waitFor(() => delivered.length === 1, 20_000);
    expect(await readFile(join(hub.projectDir, 'a.txt'), 'utf8')).toBe('A\n');
    const file = parseMime(delivered[0] ?? '');
    expect(Object.fromEntries(file.headers)).toMatchObject({
      From: 'yadon-1',
      To: 'coordinator',
      'X-IGNITE-Type': 'result',
    });
    // The yadon document is JSON, which is a YAML mapping: kept as it is, and IGNITE body fields read it.
    expect(JSON.parse(file.body)).toMatchObject({ type: 'result', from: 'yadon-1', status: 'success' });
    expect(new BodyFields(file.body).get('output')).toBe('wrote a.txt');
    expect(hub.ignite.turnsOf('coordinator')).toHaveLength(1);
  });

  it('has no IGNITE wire path to a yadon agent: the send tool refuses the recipient', async () => {
    const hub = (h = await startBridgingHub({ agents: ['alice'] }));
    const run = await runTool(runSendTool, ['task_assignment', 'coordinator', 'yadon-1', '--body', 'x'], {
      cwd: hub.ws.workspace,
      env: { WORKSPACE_DIR: hub.ws.workspace },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("不正な宛先エージェント名: 'yadon-1'");
  });
});
