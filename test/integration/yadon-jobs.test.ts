import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createSystemClock } from '../../src/core/clock.js';
import { exchangeWithAgent } from '../../src/gateways/yadon/yadon-client.js';
import { waitFor } from '../fakes/fake-cli-harness.js';
import { ask } from '../fixtures/yadon-harness.js';
import { planner, statusOf, waitForFile, yadonJobsSession } from '../fixtures/yadon-jobs-session.js';

// Failure paths (missing sockets, killed and hanging agents, restarts) are in yadon-job-failures.test.ts.

const session = yadonJobsSession();
const { harness } = session;

afterEach(() => session.close());

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
});
