import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeChannel } from '../../../test/fakes/fake-channel.js';
import { executorTeamSession, llm, turn, until } from '../../../test/fixtures/executor-team-session.js';
import type { TaskRecord } from '../../tasks/task-record.js';
import type { TaskRegistry } from '../../tasks/task-registry.js';

// How tasks are dispatched by channel concurrency (exclusive, mutex, unlimited) and the duplicate check;
// assessment, plugins, budgets and notifications are in executor-team.test.ts.

/** An exclusive computer_use channel whose runs wait for `finish()`. */
const manualShell = (): FakeChannel =>
  new FakeChannel({ id: 'shell', group: 'computer_use', concurrency: 'exclusive', isManual: true });

describe('ExecutorTeam dispatch', () => {
  const session = executorTeamSession();
  const { makeTeam } = session;
  let registry: TaskRegistry;
  let results: TaskRecord[];

  beforeEach(() => {
    ({ registry, results } = session.open());
  });
  afterEach(() => session.close());

  it('runs an exclusive channel strictly one task after another, FIFO', async () => {
    const shell = manualShell();
    const t = await makeTeam([shell], llm({ channels: { shell: true } }));
    const a = await t.analyze(turn('first'));
    const b = await t.analyze(turn('second'));
    await until(() => shell.runs.length === 1);
    expect((await registry.get(b?.id ?? ''))?.state).toBe('queued');
    shell.runs[0]?.finish();
    await until(() => shell.runs.length === 2);
    expect(shell.runs.map((r) => r.task.id)).toEqual([a?.id, b?.id]);
    shell.runs[1]?.finish();
    await until(() => results.length === 2);
  });

  it('cancels queued exclusive tasks when their group is switched off', async () => {
    const shell = manualShell();
    const t = await makeTeam([shell], llm({ channels: { shell: true } }));
    await t.analyze(turn('first'));
    const queued = await t.analyze(turn('second'));
    await until(() => shell.runs.length === 1);
    t.flags.setFlags({ computer_use_enabled: false });
    await until(async () => (await registry.get(queued?.id ?? ''))?.state === 'cancelled');
    expect((await registry.get(queued?.id ?? ''))?.error).toBe('computer_use disabled before dispatch');
    shell.runs[0]?.finish();
  });

  it('skips a task the duplicate check calls a duplicate', async () => {
    const shell = manualShell();
    const t = await makeTeam([shell], llm({ channels: { shell: true }, duplicate: true }));
    expect(await t.analyze(turn('first'))).not.toBeNull(); // nothing active yet: no check
    expect(await t.analyze(turn('first again'))).toBeNull();
    expect(await registry.list()).toHaveLength(1);
    shell.runs[0]?.finish();
  });

  it('never runs two tasks of one mutex channel at once and re-checks after the lock', async () => {
    const coder = new FakeChannel({
      id: 'coder',
      group: 'browser_use',
      concurrency: 'mutex',
      isManual: true,
    });
    const t = await makeTeam([coder], llm({ channels: { coder: true } }));
    const a = await t.analyze(turn('one'));
    const b = await t.analyze(turn('two'));
    expect(a?.state).toBe('queued');
    await until(() => coder.runs.length === 1);
    coder.availability = { ready: false, reasons: ['gone'] };
    coder.runs[0]?.finish();
    await until(async () => (await registry.get(b?.id ?? ''))?.state === 'cancelled');
    expect((await registry.get(b?.id ?? ''))?.error).toBe('browser_use unavailable before dispatch');
    expect(coder.runs).toHaveLength(1);
  });

  it('starts unlimited channel tasks running at once', async () => {
    const hook = new FakeChannel({ id: 'hook', group: 'openclaw', isManual: true });
    const t = await makeTeam([hook], llm({ channels: { hook: true } }));
    expect((await t.analyze(turn('one')))?.state).toBe('running');
    expect((await t.analyze(turn('two')))?.state).toBe('running');
    await until(() => hook.runs.length === 2);
    for (const r of hook.runs) r.finish();
  });
});
