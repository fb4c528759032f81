import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeAgentRunner } from '../../../test/fakes/fake-agent-runner.js';
import { FakeChannel } from '../../../test/fakes/fake-channel.js';
import type { FakeClock } from '../../../test/fakes/fake-clock.js';
import {
  assistant,
  executorTeamSession,
  llm,
  turn,
  until,
  user,
} from '../../../test/fixtures/executor-team-session.js';
import { testPlugins } from '../../../test/fixtures/neko-plugins.js';
import type { Bus } from '../../bus/bus.types.js';
import type { TaskRecord } from '../../tasks/task-record.js';
import type { TaskRegistry } from '../../tasks/task-registry.js';
import type { AnalyzeInput } from './turn-intake.js';

// Assessment, plugin selection, proactive budget, tracker context and notifications; dispatch by channel
// concurrency and the duplicate check are in executor-team-dispatch.test.ts.

describe('ExecutorTeam', () => {
  const session = executorTeamSession();
  const { makeTeam, makeTeamOnly } = session;
  let clock: FakeClock;
  let bus: Bus;
  let registry: TaskRegistry;
  let results: TaskRecord[];
  let notes: string[];

  beforeEach(() => {
    ({ clock, bus, registry, results, notes } = session.open());
  });
  afterEach(() => session.close());

  it('creates a computer_use task on the assessed channel; the earlier channel in priority wins a tie', async () => {
    const hook = new FakeChannel({ id: 'hook', group: 'openclaw' });
    const shell = new FakeChannel({ id: 'shell', group: 'computer_use', concurrency: 'exclusive' });
    const t = await makeTeam([hook, shell], llm({ channels: { hook: true, shell: true } }));
    const created = await t.analyze(turn('do it'));
    expect(created).toMatchObject({
      kind: 'openclaw',
      channel: 'hook',
      params: { description: 'do hook', attachment_count: 0 },
    });
    const only = await makeTeamOnly([shell], llm({ channels: { shell: true } }));
    expect(await only.analyze(turn('run it'))).toMatchObject({
      kind: 'computer_use',
      state: 'queued',
      params: { instruction: 'do shell', screenshot: null },
    });
  });

  it('lets a plugin decision with can_execute false suppress every channel', async () => {
    const plugins = testPlugins(clock);
    const shell = new FakeChannel({ id: 'shell', group: 'computer_use' });
    const runner = llm({
      channels: { shell: true },
      plugin: [{ has_task: true, can_execute: false, plugin_id: 'notes', entry_id: 'add' }],
    });
    const t = await makeTeam([shell, plugins.channel], runner);
    expect(await t.analyze(turn('add a note'))).toBeNull();
    expect(await registry.list()).toEqual([]);
  });

  it('re-asks the plugin selection once with CORRECTION for an unknown plugin, then creates no task', async () => {
    const plugins = testPlugins(clock);
    const bad = { has_task: true, can_execute: true, plugin_id: 'nope', entry_id: 'run' };
    const runner = llm({ plugin: [bad, bad] });
    const t = await makeTeam([plugins.channel], runner);
    expect(await t.analyze(turn('use nope'))).toBeNull();
    const selections = runner.inputs.filter((i) => i.prompt.includes('has_task'));
    expect(selections).toHaveLength(2);
    expect(selections[1]?.prompt).toContain(
      "CORRECTION: plugin_id 'nope' not found. Please fix your response and return a valid JSON.",
    );
    expect(await registry.list()).toEqual([]);
  });

  it('runs a corrected plugin answer with aliases and integer ids', async () => {
    const plugins = testPlugins(clock);
    const runner = llm({
      plugin: [
        {
          has_task: true,
          can_execute: true,
          plugin_id: 'notes',
          plugin_entry_id: 'nope',
          plugin_args: { text: 'a' },
        },
        {
          has_task: true,
          can_execute: true,
          plugin_id: 'notes',
          event_id: 'add',
          plugin_args: { text: 'a' },
        },
      ],
    });
    const t = await makeTeam([plugins.channel], runner);
    expect(await t.analyze(turn('note a'))).toMatchObject({
      kind: 'user_plugin',
      params: { plugin_id: 'notes', entry_id: 'add', plugin_name: 'Notes' },
    });
    await until(() => results.length === 1);
    expect(plugins.calls).toEqual([{ plugin: 'notes', entryId: 'add', args: { text: 'a' } }]);
  });

  it('limits proactive analyses to two per session until a new-session restore signal', async () => {
    const hook = new FakeChannel({ id: 'hook', group: 'openclaw' });
    const runner = llm({ channels: { hook: false } });
    const t = await makeTeam([hook], runner);
    const proactive = (text: string): AnalyzeInput =>
      turn('', { messages: [user('hi'), assistant(text)], isProactive: true });
    await t.analyze(proactive('a'));
    await t.analyze(proactive('a')); // same assistant text: skipped
    await t.analyze(proactive('b'));
    await t.analyze(proactive('c')); // budget used
    expect(runner.inputs).toHaveLength(2);
    expect(runner.inputs[0]?.prompt).toContain('LATEST_USER_REQUEST: a');
    await t.restoreSignal('s1', true);
    await t.analyze(proactive('d'));
    expect(runner.inputs).toHaveLength(3);
  });

  it('gates a low external intent without a deterministic signal', async () => {
    const hook = new FakeChannel({ id: 'hook', group: 'openclaw' });
    const runner = llm({ channels: { hook: true } });
    const t = await makeTeam([hook], runner);
    expect(await t.analyze(turn('maybe', { externalIntent: 0.1 }))).toBeNull();
    expect(runner.inputs).toHaveLength(0);
    expect(await t.analyze(turn('surely', { externalIntent: 0.9 }))).not.toBeNull();
  });

  it('adds the tracker context and redacts a cancelled request from the next assessment', async () => {
    const hook = new FakeChannel({ id: 'hook', group: 'openclaw', isManual: true });
    const runner = llm({ channels: { hook: true } });
    const t = await makeTeam([hook], runner);
    const first = await t.analyze(turn('build the site'));
    await until(() => hook.runs.length === 1);
    hook.runs[0]?.finish({ summary: 'site built' });
    await until(() => results.length === 1);
    const second = await t.analyze(turn('deploy it'));
    await t.cancel(second?.id ?? '');
    await t.analyze({
      ...turn('thanks'),
      messages: [user('build the site'), assistant('OK'), user('deploy it'), assistant('OK'), user('thanks')],
    });
    const prompt = runner.inputs.at(-1)?.prompt ?? '';
    expect(prompt).toContain(`[COMPLETED] method=hook | do hook | result: site built`);
    expect(prompt).toContain('The user cancelled the request');
    expect(prompt).not.toContain('user: deploy it');
    expect(prompt).toContain('user: build the site');
    expect(first).not.toBeNull();
  });

  it('notifies when the assessment fails', async () => {
    const hook = new FakeChannel({ id: 'hook', group: 'openclaw' });
    const t = await makeTeam(
      [hook],
      new FakeAgentRunner(() => ({ isError: true, exitCode: 1, stderrTail: 'bad key' })),
    );
    expect(await t.analyze(turn('x'))).toBeNull();
    expect(notes).toEqual(['⚠️ Agent评估失败: assessment failed: bad key']);
  });

  it('notifies instead of failing when the background analysis throws', async () => {
    const hook = new FakeChannel({ id: 'hook', group: 'openclaw' });
    const t = await makeTeam([hook], llm({ channels: { hook: true } }));
    await bus.close(); // the task cannot be stored now
    expect(await t.analyze(turn('x'))).toBeNull();
    expect(notes).toEqual(['💥 Agent后台任务异常: the bus is closed']);
  });

  it('assesses concurrent requests of different sessions one at a time', async () => {
    let active = 0;
    let peak = 0;
    const runner = new FakeAgentRunner(async () => {
      peak = Math.max(peak, ++active);
      await new Promise((r) => setTimeout(r, 20));
      active--;
      return { text: '{"hook": {"can_execute": false}}' };
    });
    const hook = new FakeChannel({ id: 'hook', group: 'openclaw' });
    const t = await makeTeam([hook], runner);
    await Promise.all([
      t.analyze(turn('a', { sessionKey: 'one' })),
      t.analyze(turn('b', { sessionKey: 'two' })),
    ]);
    expect(runner.inputs).toHaveLength(2);
    expect(peak).toBe(1);
  });
});
