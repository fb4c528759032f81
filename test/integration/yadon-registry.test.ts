import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentRecord } from '../../src/bus/agent-directory.js';
import { createSystemClock } from '../../src/core/clock.js';
import { isMusubiError } from '../../src/core/errors.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { TaskRecord } from '../../src/tasks/task-record.js';
import { waitFor } from '../fakes/fake-cli-harness.js';
import { ask, shortTempDir, startYadonHarness, type YadonHarness } from '../fixtures/yadon-harness.js';
import { planner, statusOf, waitForFile, yadonJobsSession } from '../fixtures/yadon-jobs-session.js';

const session = yadonJobsSession();
const { harness, track } = session;

afterEach(() => session.close());

const yadonTasks = (h: YadonHarness): Promise<TaskRecord[]> => h.registry.list({ owner: 'yadon' });

/** The registry row of the yadon task `taskId` once it is in `state`. */
async function rowOf(h: YadonHarness, taskId: string, state: TaskRecord['state']): Promise<TaskRecord> {
  let found: TaskRecord | undefined;
  await waitFor(
    async () => {
      found = (await yadonTasks(h)).find((t) => t.params['taskId'] === taskId && t.state === state);
      return found !== undefined;
    },
    15_000,
    `${taskId} ${state}`,
  );
  if (found === undefined) throw new Error('unreachable');
  return found;
}

const agentsOf = async (h: YadonHarness): Promise<Record<string, Partial<AgentRecord>>> =>
  Object.fromEntries(
    (await h.directory.list()).map((a) => [
      a.name,
      { protocol: a.protocol, state: a.state, role: a.role, currentTask: a.currentTask },
    ]),
  );

describe('yadon - task registry and agent directory', () => {
  it('makes every job and subtask a registry row and lists every agent, busy while it works', async () => {
    const h = await harness({ workerCount: 2 });
    await waitFor(async () => Object.keys(await agentsOf(h)).length === 3, 5_000, 'three agents');
    expect(await agentsOf(h)).toEqual({
      yadoran: { protocol: 'yadon', state: 'idle', role: 'manager' },
      'yadon-1': { protocol: 'yadon', state: 'idle', role: 'worker' },
      'yadon-2': { protocol: 'yadon', state: 'idle', role: 'worker' },
    });
    const job = ask(h.socket('yadoran'), {
      type: 'task',
      id: 'job-1',
      payload: { instruction: `- write a.txt alpha\n- ${waitForFile('go')}` },
    });
    await rowOf(h, 'job-1-implement-sub2', 'running');
    await waitFor(async () => (await agentsOf(h))['yadon-2']?.state === 'busy', 5_000, 'yadon-2 busy');
    expect((await agentsOf(h))['yadon-2']).toMatchObject({ currentTask: 'job-1-implement-sub2' });
    expect((await agentsOf(h))['yadoran']).toMatchObject({ state: 'busy', currentTask: 'job-1' });
    await writeFile(join(h.projectDir, 'go'), '');
    expect(await job).toMatchObject({ id: 'job-1', status: 'success' });
    const rows = await yadonTasks(h);
    expect(rows.map((t) => [t.agent, t.kind, t.params['taskId'], t.state, t.channel])).toEqual([
      ['yadoran', 'job', 'job-1', 'completed', 'socket'],
      ['yadon-1', 'subtask', 'job-1-implement-sub1', 'completed', 'socket'],
      ['yadon-2', 'subtask', 'job-1-implement-sub2', 'completed', 'socket'],
      ['yadon-1', 'subtask', 'job-1-docs-sub1', 'completed', 'socket'],
      ['yadon-1', 'subtask', 'job-1-review-sub1', 'completed', 'socket'],
    ]);
    expect(rows[0]).toMatchObject({ title: 'job-1: - write a.txt alpha', result: { status: 'success' } });
    await waitFor(async () => (await agentsOf(h))['yadoran']?.state === 'idle', 5_000, 'yadoran idle');
    await h.gateway.stop();
    expect(Object.values(await agentsOf(h)).map((a) => a.state)).toEqual(['offline', 'offline', 'offline']);
  });

  it('stops the agent turn of a cancelled row and answers its sender with the cancelled error', async () => {
    const h = await harness({ workerCount: 1 });
    const pending = ask(h.socket('yadon-1'), {
      type: 'task',
      id: 'long',
      payload: { instruction: waitForFile('never') },
    });
    const row = await rowOf(h, 'long', 'running');
    expect(await h.registry.cancel(row.id)).toMatchObject({ outcome: 'cancelled' });
    const cancelled = { type: 'error', from: 'yadon-1', message: 'タスクはキャンセルされました: long' };
    expect(await pending).toEqual(cancelled);
    expect(await ask(h.socket('yadon-1'), { type: 'get_result', id: 'long' })).toEqual(cancelled);
    expect(await statusOf(h, 'yadon-1')).toMatchObject({ state: 'idle', current_task: null });
    const next = await ask(h.socket('yadon-1'), {
      type: 'task',
      id: 'n',
      payload: { instruction: 'reply again' },
    });
    expect(next).toMatchObject({ status: 'success', payload: { output: 'again' } });
  });

  it('skips a task cancelled while queued and answers it when its turn comes', async () => {
    const h = await harness({ workerCount: 1 });
    const first = ask(h.socket('yadon-1'), {
      type: 'task',
      id: 'a',
      payload: { instruction: waitForFile('go') },
    });
    await rowOf(h, 'a', 'running');
    const second = ask(h.socket('yadon-1'), {
      type: 'task',
      id: 'b',
      payload: { instruction: 'write c.txt C' },
    });
    const queued = await rowOf(h, 'b', 'queued');
    await h.registry.cancel(queued.id);
    expect(await ask(h.socket('yadon-1'), { type: 'get_result', id: 'b' })).toMatchObject({
      message: 'タスクはキャンセルされました: b',
    });
    await writeFile(join(h.projectDir, 'go'), '');
    expect(await first).toMatchObject({ id: 'a', status: 'success' });
    expect(await second).toEqual({
      type: 'error',
      from: 'yadon-1',
      message: 'タスクはキャンセルされました: b',
    });
    expect(existsSync(join(h.projectDir, 'c.txt'))).toBe(false);
  });

  it('cancels the running subtasks of a cancelled job and runs none of its later phases', async () => {
    const h = await harness({
      workerCount: 1,
      managerRunner: planner([
        { name: 'implement', subtasks: [{ instruction: waitForFile('never') }] },
        { name: 'docs', subtasks: [{ instruction: 'write docs.txt D' }] },
      ]),
    });
    const job = ask(h.socket('yadoran'), { type: 'task', id: 'job-x', payload: { instruction: 'x' } });
    await rowOf(h, 'job-x-implement-sub1', 'running');
    const jobRow = await rowOf(h, 'job-x', 'running');
    await h.registry.cancel(jobRow.id);
    expect(await job).toEqual({
      type: 'error',
      from: 'yadoran',
      message: 'タスクはキャンセルされました: job-x',
    });
    const sub = await rowOf(h, 'job-x-implement-sub1', 'cancelled');
    expect(sub.error).toBe('job job-x cancelled');
    await waitFor(async () => (await statusOf(h, 'yadon-1'))['state'] === 'idle', 10_000, 'yadon-1 idle');
    expect((await yadonTasks(h)).map((t) => t.params['taskId'])).toEqual(['job-x', 'job-x-implement-sub1']);
    expect(existsSync(join(h.projectDir, 'docs.txt'))).toBe(false);
  });

  it('leaves the tasks and listing of the live host alone when a second host on its store is refused', async () => {
    const { dir, cleanup } = await shortTempDir('ydr-');
    track({ close: cleanup });
    const clock = createSystemClock();
    const open = () => SqliteStore.open({ path: join(dir, 'bus.db'), clock, pollIntervalMs: 20 });
    const h = await harness({ workerCount: 1, store: open(), keepDir: true });
    track({ close: () => rm(h.dir, { recursive: true, force: true }) });
    const pending = ask(h.socket('yadon-1'), {
      type: 'task',
      id: 'w',
      payload: { instruction: waitForFile('go') },
    });
    await rowOf(h, 'w', 'running');
    await waitFor(async () => (await agentsOf(h))['yadon-1']?.state === 'busy', 5_000, 'yadon-1 busy');
    const refused = await startYadonHarness({
      workerCount: 1,
      dir: h.dir,
      socketDir: h.dir,
      store: open(),
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isMusubiError(refused, 'GATEWAY_ADDRESS_IN_USE')).toBe(true);
    await rowOf(h, 'w', 'running');
    expect((await agentsOf(h))['yadon-1']).toMatchObject({ state: 'busy', currentTask: 'w' });
    await writeFile(join(h.projectDir, 'go'), '');
    expect(await pending).toMatchObject({ id: 'w', status: 'success' });
  });
});
