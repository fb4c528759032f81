import { readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentRunInput, AgentRunner } from '../../src/agents/agent-runner.js';
import { createAgentRunner } from '../../src/agents/create-agent-runner.js';
import { ChildReaper } from '../../src/agents/process/child-reaper.js';
import { isProcessAlive } from '../../src/agents/process/process-group.js';
import { createSystemClock } from '../../src/core/clock.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { fakeParentEnv, readPids, waitFor } from '../fakes/fake-cli-harness.js';
import { FakeAgentRunner } from '../fakes/fake-agent-runner.js';
import { ask, shortTempDir, startYadonHarness } from '../fixtures/yadon-harness.js';
import { planner, statusOf, waitForFile, yadonJobsSession } from '../fixtures/yadon-jobs-session.js';

const session = yadonJobsSession();
const { track, harness } = session;

afterEach(() => session.close());

describe('yadon job failures (scripted agents, real sockets)', () => {
  it('reports a missing worker socket and collects a worker error reply unchanged', async () => {
    const subtasks = [
      { instruction: 'reply one' },
      { instruction: 'reply two' },
      { instruction: 'reply three' },
    ];
    const h = await harness({ workerCount: 3, managerRunner: planner([{ name: 'implement', subtasks }]) });
    await rm(h.socket('yadon-2'));
    await rm(h.socket('yadon-3'));
    const failing = createServer((s) =>
      s.resume().end('{"type": "error", "from": "yadon-3", "message": "接続処理エラー: boom"}'),
    );
    await new Promise<void>((resolve) => failing.listen(h.socket('yadon-3'), () => resolve()));
    track({ close: () => new Promise<void>((resolve) => failing.close(() => resolve())) });
    const reply = await ask(h.socket('yadoran'), { type: 'task', id: 'j', payload: { instruction: 'x' } });
    expect(reply['status']).toBe('partial_error');
    expect((reply['payload'] as { summary: string }).summary).toBe(
      '[yadon-1] success: one\n[yadon-2] error: ヤドン2への送信に失敗\n[yadon-3] unknown: ',
    );
    expect((reply['payload'] as { output: string }).output).toContain(
      '=== yadon-2 (error) ===\n送信失敗: [Errno 2] No such file or directory',
    );
  });

  it('retries a subtask whose agent was killed, then reports it as an error entry', async () => {
    const { dir, cleanup } = await shortTempDir('ydk-');
    track({ close: cleanup });
    const pidFile = join(dir, 'pids');
    const hanging = createAgentRunner({
      backend: 'claude',
      env: fakeParentEnv(),
      extraEnv: { FAKE_AGENT_HANG: '1', FAKE_AGENT_PID_FILE: pidFile },
      reaper: new ChildReaper(),
    });
    const scripted = new FakeAgentRunner(() => ({ text: 'ok' }));
    const worker: AgentRunner = {
      backend: 'claude',
      available: () => hanging.available(),
      run: (input: AgentRunInput) => (input.prompt.includes('HANG') ? hanging : scripted).run(input),
    };
    const h2 = await harness({
      workerCount: 1,
      retry: { baseMs: 10, capMs: 20, maxAttempts: 2 },
      managerRunner: planner([
        { name: 'implement', subtasks: [{ instruction: 'HANG here' }] },
        { name: 'docs', subtasks: [{ instruction: 'docs' }] },
      ]),
      workerRunner: () => worker,
    });
    const job = ask(h2.socket('yadoran'), { type: 'task', id: 'crash', payload: { instruction: 'x' } });
    const killed: number[] = [];
    for (let attempt = 1; attempt <= 2; attempt++) {
      await waitFor(
        async () => (await readFile(pidFile, 'utf8').catch(() => '')).split('\n').length > attempt,
        10_000,
      );
      const pids = (await readFile(pidFile, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => Number(l.split(' ')[1]));
      const pid = pids[attempt - 1] ?? 0;
      killed.push(pid);
      process.kill(pid, 'SIGKILL');
    }
    const reply = await job;
    expect(killed).toHaveLength(2);
    expect(reply['status']).toBe('partial_error');
    const summary = String((reply['payload'] as { summary: string }).summary).split('\n');
    expect(summary[0]).toMatch(
      /^\[yadon-1\] error: エージェントが異常終了しました \(agent process killed by SIGKILL\)/,
    );
    expect(summary[1]).toBe('[yadon-1] success: ok');
    const dead = await h2.bus.listDeadLetters({ mailbox: 'yadon-1' });
    expect(dead).toHaveLength(1);
    const events = await h2.bus.readEvents({ limit: 1000 });
    expect(events.filter((e) => e.type === 'message.nacked')).toHaveLength(1);
    expect(events.some((e) => e.type === 'escalation')).toBe(true);
    for (const pid of killed) expect(isProcessAlive(pid)).toBe(false);
    expect(await statusOf(h2, 'yadon-1')).toMatchObject({ state: 'idle' });
  });

  it('times a hanging agent out with status error and no process left; a missing binary gives 実行エラー', async () => {
    const { dir, cleanup } = await shortTempDir('ydk-');
    track({ close: cleanup });
    const pidFile = join(dir, 'pids');
    const env = fakeParentEnv();
    const h = await harness({
      workerCount: 2,
      timings: { workerLlmMs: 400 },
      workerRunner: (n) =>
        n === 1
          ? createAgentRunner({
              backend: 'claude',
              env,
              extraEnv: { FAKE_AGENT_HANG: '1', FAKE_AGENT_PID_FILE: pidFile },
              reaper: new ChildReaper(),
              graceMs: 200,
            })
          : createAgentRunner({
              backend: 'claude',
              env: { PATH: '/nonexistent' },
              reaper: new ChildReaper(),
            }),
    });
    const timedOut = await ask(h.socket('yadon-1'), {
      type: 'task',
      id: 't',
      payload: { instruction: 'hang' },
    });
    expect(timedOut).toMatchObject({ status: 'error', payload: { output: 'タイムアウト (0分)' } });
    const { main } = await readPids(pidFile);
    expect(isProcessAlive(main ?? 0)).toBe(false);
    const missing = await ask(h.socket('yadon-2'), { type: 'task', id: 'm', payload: { instruction: 'x' } });
    expect(missing).toMatchObject({ status: 'error' });
    expect(String((missing['payload'] as { output: string }).output)).toMatch(/^実行エラー: /);
  });

  it('answers get_result for a task interrupted by a host restart with the interrupted error', async () => {
    const { dir, cleanup } = await shortTempDir('yds-');
    track({ close: cleanup });
    const clock = createSystemClock();
    const first = await startYadonHarness({
      workerCount: 1,
      store: SqliteStore.open({ path: join(dir, 'bus.db'), clock }),
      keepDir: true,
    });
    track({ close: () => rm(first.dir, { recursive: true, force: true }) });
    const pending = ask(first.socket('yadon-1'), {
      type: 'task',
      id: 'long-1',
      payload: { instruction: waitForFile('never') },
    });
    await waitFor(async () => (await statusOf(first, 'yadon-1'))['state'] === 'busy', 15_000);
    await first.close();
    expect(await pending).toMatchObject({
      type: 'error',
      from: 'yadon-1',
      message: expect.stringMatching(/^接続処理エラー: /),
    });
    const second = await harness({
      workerCount: 1,
      socketDir: first.dir,
      dir: first.dir,
      store: SqliteStore.open({ path: join(dir, 'bus.db'), clock }),
    });
    expect(await ask(second.socket('yadon-1'), { type: 'get_result', id: 'long-1' })).toEqual({
      type: 'error',
      from: 'yadon-1',
      message: 'タスクは再起動により中断されました: long-1',
    });
  });
});
