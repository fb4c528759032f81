import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentRunInput, AgentRunner } from '../../src/agents/agent-runner.js';
import { createAgentRunner } from '../../src/agents/create-agent-runner.js';
import { ChildReaper } from '../../src/agents/process/child-reaper.js';
import { isProcessAlive } from '../../src/agents/process/process-group.js';
import { createSystemClock } from '../../src/core/clock.js';
import { exchangeWithAgent } from '../../src/gateways/yadon/yadon-client.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { fakeParentEnv, readPids, waitFor } from '../fakes/fake-cli-harness.js';
import { FakeAgentRunner } from '../fakes/fake-agent-runner.js';
import { expectNoLiveChildren } from '../fixtures/process-children.js';
import { ask, shortTempDir, startYadonHarness, type YadonHarness } from '../fixtures/yadon-harness.js';

const opened: Array<{ close(): Promise<unknown> }> = [];
const track = <T extends { close(): Promise<unknown> }>(x: T): T => (opened.push(x), x);

afterEach(async () => {
  for (const x of opened.splice(0).reverse()) await x.close();
  await expectNoLiveChildren(10_000);
});

async function harness(options: Parameters<typeof startYadonHarness>[0] = {}): Promise<YadonHarness> {
  return track(await startYadonHarness(options));
}

/** A scripted instruction that blocks until the file `name` appears in the project directory. */
const waitForFile = (name: string) =>
  `run node -e 'const f=require("fs");const t=setInterval(()=>{if(f.existsSync("${name}"))clearInterval(t)},20)'`;

/** A manager runner that answers every decomposition with `plan`. */
const planner = (phases: unknown[]) => new FakeAgentRunner(() => ({ text: JSON.stringify({ phases }) }));

const statusOf = (h: YadonHarness, agent: string) => ask(h.socket(agent), { type: 'status' });

describe('yadon jobs (scripted agents, real sockets)', () => {
  it('runs a job through decomposition and three phases, writes the files and aggregates in order', async () => {
    const h = await harness({ workerCount: 2 });
    const reply = await ask(h.socket('yadoran'), {
      type: 'task',
      id: 'job-1',
      payload: { instruction: '- write a.txt alpha\n- write b.txt beta', project_dir: h.projectDir },
    });
    expect(await readFile(join(h.projectDir, 'a.txt'), 'utf8')).toBe('alpha\n');
    expect(await readFile(join(h.projectDir, 'b.txt'), 'utf8')).toBe('beta\n');
    expect(reply).toMatchObject({ type: 'result', id: 'job-1', from: 'yadoran', status: 'success' });
    const summary = String((reply['payload'] as { summary: string }).summary).split('\n');
    expect(summary).toEqual([
      '[yadon-1] success: scripted: wrote a.txt (6 bytes)',
      '[yadon-2] success: scripted: wrote b.txt (5 bytes)',
      '[yadon-1] success: scripted: no instructions found; nothing done',
      '[yadon-1] success: scripted: no instructions found; nothing done',
    ]);
    const events = await h.bus.readEvents({ limit: 1000 });
    const texts = events.flatMap((e) =>
      e.type === 'agent.bubble' && 'data' in e ? [String(e.data['text'])] : [],
    );
    expect(texts).toContain('ヤドキングが言ってる「- write a.txt alpha\n- write b.txt beta」');
    expect(texts).toContain('実装するヤドン2体に依頼');
    expect(texts).toContain('やるやぁん「write a.txt alpha」');
    expect(texts.at(-1)).toMatch(/^みんなできた「/);
    expect(await ask(h.socket('yadoran'), { type: 'get_result', id: 'job-1' })).toEqual(reply);
  });

  it('reports busy with the task ids while a job runs, queues the next job and serves get_result', async () => {
    const h = await harness({ workerCount: 2 });
    const first = ask(h.socket('yadoran'), {
      type: 'task',
      id: 'job-a',
      payload: { instruction: waitForFile('go') },
    });
    await waitFor(async () => (await statusOf(h, 'yadon-1'))['state'] === 'busy', 15_000, 'worker 1 busy');
    expect(await statusOf(h, 'yadon-1')).toEqual({
      type: 'status_response',
      from: 'yadon-1',
      state: 'busy',
      current_task: 'job-a-implement-sub1',
    });
    expect(await statusOf(h, 'yadoran')).toEqual({
      type: 'status_response',
      from: 'yadoran',
      state: 'busy',
      current_task: 'job-a',
      workers: { 'yadon-1': 'busy', 'yadon-2': 'idle' },
    });
    const second = ask(h.socket('yadoran'), {
      type: 'task',
      id: 'job-b',
      payload: { instruction: 'write b.txt B' },
    });
    await waitFor(
      async () => (await ask(h.socket('yadoran'), { type: 'get_result', id: 'job-b' }))['state'] === 'queued',
      15_000,
    );
    expect(await ask(h.socket('yadoran'), { type: 'get_result', id: 'job-a' })).toEqual({
      type: 'task_state',
      from: 'yadoran',
      id: 'job-a',
      state: 'running',
    });
    expect(await ask(h.socket('yadoran'), { type: 'get_result', id: 'nope' })).toEqual({
      type: 'error',
      from: 'yadoran',
      message: '不明なタスクID: nope',
    });
    expect(existsSync(join(h.projectDir, 'b.txt'))).toBe(false);
    await writeFile(join(h.projectDir, 'go'), '');
    expect(await first).toMatchObject({ id: 'job-a', status: 'success' });
    expect(await second).toMatchObject({ id: 'job-b', status: 'success' });
    expect(await statusOf(h, 'yadoran')).toMatchObject({ state: 'idle', current_task: null });
  });

  it('runs two tasks sent to one worker one after another, and generates ids for tasks without one', async () => {
    const h = await harness({ workerCount: 1 });
    const a = ask(h.socket('yadon-1'), {
      type: 'task',
      id: 'w-a',
      payload: { instruction: waitForFile('go') },
    });
    await waitFor(async () => (await statusOf(h, 'yadon-1'))['current_task'] === 'w-a', 15_000);
    const b = ask(h.socket('yadon-1'), { type: 'task', payload: { instruction: 'reply second' } });
    await writeFile(join(h.projectDir, 'go'), '');
    expect(await a).toMatchObject({ id: 'w-a', status: 'success' });
    const second = await b;
    expect(second).toMatchObject({ status: 'success', payload: { output: 'second', summary: 'second' } });
    expect(String(second['id'])).toMatch(/^task-\d{8}-\d{6}-[0-9a-f]{4}$/);
  });

  it('runs 6 subtasks on 4 workers', async () => {
    const subtasks = Array.from({ length: 6 }, (_, i) => ({ instruction: `write f${i + 1}.txt ${i + 1}` }));
    const h = await harness({ workerCount: 4, managerRunner: planner([{ name: 'implement', subtasks }]) });
    const reply = await ask(h.socket('yadoran'), {
      type: 'task',
      id: 'six',
      payload: { instruction: 'six files' },
    });
    expect(reply['status']).toBe('success');
    for (let i = 1; i <= 6; i++)
      expect(await readFile(join(h.projectDir, `f${i}.txt`), 'utf8')).toBe(`${i}\n`);
    const lines = String((reply['payload'] as { summary: string }).summary).split('\n');
    expect(lines).toHaveLength(6);
    expect(lines.slice(0, 4).map((l) => l.slice(0, 9))).toEqual([
      '[yadon-1]',
      '[yadon-2]',
      '[yadon-3]',
      '[yadon-4]',
    ]);
  });

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

  it('collects a reply that arrives after the dispatch wait by polling get_result', async () => {
    const h = await harness({
      workerCount: 1,
      managerRunner: planner([{ name: 'implement', subtasks: [{ instruction: 'sleep 600\nreply late' }] }]),
      timings: { dispatch: { dispatchWaitMs: 150, pollMs: 50, giveUpMs: 20_000 } },
    });
    const reply = await ask(h.socket('yadoran'), { type: 'task', id: 'late', payload: { instruction: 'x' } });
    expect(reply).toMatchObject({ status: 'success', payload: { summary: '[yadon-1] success: late' } });
  });

  it('keeps the result of a job whose sender gave up; get_result returns it later', async () => {
    const h = await harness({ workerCount: 1 });
    const clock = createSystemClock();
    const gaveUp = await exchangeWithAgent(
      h.socket('yadoran'),
      { type: 'task', id: 'gone', payload: { instruction: `${waitForFile('go')}\nreply finished` } },
      { timeoutMs: 100, clock },
    );
    expect(gaveUp).toMatchObject({ ok: false, stage: 'timeout', text: 'timed out' });
    await writeFile(join(h.projectDir, 'go'), '');
    await waitFor(
      async () => (await ask(h.socket('yadoran'), { type: 'get_result', id: 'gone' }))['type'] === 'result',
      15_000,
    );
    expect(await ask(h.socket('yadoran'), { type: 'get_result', id: 'gone' })).toMatchObject({
      status: 'success',
    });
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

  it('runs a bus message from another gateway as a task and mails the result back', async () => {
    const h = await harness({ workerCount: 1 });
    const sent = await h.bus.send({ to: 'yadon-1', from: 'tester', type: 'text', body: 'write x.txt X' });
    const delivery = await h.bus.receive('tester', { timeoutMs: 10_000 });
    expect(delivery?.envelope.type).toBe('result');
    expect(JSON.parse(delivery?.envelope.body ?? '')).toMatchObject({
      type: 'result',
      id: sent.envelope.id,
      from: 'yadon-1',
      status: 'success',
    });
    expect(await readFile(join(h.projectDir, 'x.txt'), 'utf8')).toBe('X\n');
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
