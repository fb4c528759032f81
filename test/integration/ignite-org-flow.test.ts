import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ChildReaper } from '../../src/agents/process/child-reaper.js';
import { ScriptedRunner } from '../../src/agents/scripted/scripted-runner.js';
import { systemPrompts } from '../../src/cli/ignite/role-prompts.js';
import { writePlan } from '../../src/cli/ignite/producers.js';
import { initWorkspace } from '../../src/cli/ignite/workspace-init.js';
import { IgnitePaths } from '../../src/gateways/ignite/ignite-paths.js';
import { waitFor } from '../fakes/fake-cli-harness.js';
import { startMonitor, type TestMonitor } from '../fixtures/ignite-monitor.js';
import type { IgniteWorkspace } from '../fixtures/ignite-workspace.js';

describe('ignite org team with scripted agents', () => {
  let workspace = '';
  let monitor: TestMonitor | undefined;
  afterEach(async () => {
    await monitor?.close();
    await rm(workspace, { recursive: true, force: true });
  });

  it('runs user_goal -> strategy -> task_list -> task_assignment -> task_completed -> evaluation_result end to end', async () => {
    workspace = await mkdtemp(join(tmpdir(), 'musubi-ignite-org-'));
    const { runtimeDir } = await initWorkspace(workspace, 2);
    const paths = new IgnitePaths(runtimeDir);
    for (let idx = 0; idx < 8; idx++)
      await writeFile(join(paths.state, `.agent_session_${idx}`), `scripted-${idx}\n`);
    const reaper = new ChildReaper();
    const runner = new ScriptedRunner({ env: process.env, reaper });
    const ws: IgniteWorkspace = {
      workspace,
      rt: runtimeDir,
      root: (a) => paths.agentRoot(a),
      processed: (a) => paths.processed(a),
      send: () => Promise.reject(new Error('unused')),
      list: async (dir) =>
        (await readdir(dir).catch(() => [])).filter((n) => !n.startsWith('.') && n !== 'processed'),
      read: (p) => readFile(p, 'utf8'),
      cleanup: () => rm(workspace, { recursive: true, force: true }),
    };
    const prompts = systemPrompts(runtimeDir);
    monitor = await startMonitor({
      ws,
      runnerFor: () => runner,
      systemPromptFor: prompts,
      env: { QUEUE_PARALLEL_MAX: '4' },
    });
    await writePlan(paths, 'Build the demo:\n- write out/a.txt alpha\n- write out/b.txt beta', 'e2e');

    const events = async (kind: string): Promise<Array<{ agent: string; type: string }>> =>
      (await monitor!.bus.readEvents({ limit: 10_000 }))
        .flatMap((e) => (e.type === `gateway.ignite.${kind}` && 'data' in e ? [e.data] : []))
        .map((d) => ({ agent: String(d['agent']), type: String(d['file']).replace(/_\d{16}\.mime$/, '') }));
    await waitFor(
      async () => (await events('delivered')).filter((d) => d.type === 'evaluation_result').length === 2,
      90_000,
      'two evaluation results at the leader',
    );

    // Claims (turn starts) follow causality: each message is sent during its predecessor's turn.
    const flow = await events('claimed');
    const firstOf = (type: string): number => flow.findIndex((d) => d.type === type);
    const order = [
      'user_goal',
      'strategy_request',
      'strategy_response',
      'task_list',
      'task_assignment',
      'task_completed',
      'evaluation_request',
      'evaluation_result',
    ];
    expect(order.map(firstOf)).toEqual([...order.map(firstOf)].sort((a, b) => a - b));
    expect(order.map(firstOf).every((i) => i >= 0)).toBe(true);
    expect(
      flow
        .filter((d) => d.type === 'task_assignment')
        .map((d) => d.agent)
        .sort(),
    ).toEqual(['ignitian_1', 'ignitian_2']);
    expect(flow.filter((d) => d.type === 'evaluation_result').every((d) => d.agent === 'leader')).toBe(true);
    expect(await readFile(join(workspace, 'out', 'a.txt'), 'utf8')).toBe('alpha\n');
    expect(await readFile(join(workspace, 'out', 'b.txt'), 'utf8')).toBe('beta\n');
    // Agents delete their message files at the end of their turns, which may still be running.
    const agents = ['leader', 'strategist', 'coordinator', 'evaluator', 'ignitian_1', 'ignitian_2'];
    const leftovers = async (): Promise<string[]> =>
      (await Promise.all(agents.map((a) => readdir(paths.processed(a)).catch(() => [])))).flat();
    await waitFor(async () => (await leftovers()).length === 0, 10_000, 'every processed/ folder empty');
    expect(await readdir(paths.deadLetter)).toEqual([]);
    expect(reaper.liveGroups()).toEqual([]);
  }, 120_000);
});
