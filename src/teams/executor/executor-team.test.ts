import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeAgentRunner } from '../../../test/fakes/fake-agent-runner.js';
import { FakeChannel } from '../../../test/fakes/fake-channel.js';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { testPlugins } from '../../../test/fixtures/neko-plugins.js';
import type { AgentRunInput } from '../../agents/agent-runner.js';
import { createBus } from '../../bus/bus.js';
import type { Bus } from '../../bus/bus.types.js';
import { createIdGenerator } from '../../core/ids.js';
import { createSilentLogger } from '../../core/logger.js';
import { MemoryStore } from '../../store/memory/memory-store.js';
import type { TaskRecord } from '../../tasks/task-record.js';
import { TaskRegistry } from '../../tasks/task-registry.js';
import type { Channel } from './channel.js';
import type { ChatMessage } from './conversation.js';
import { ExecutorTeam, type ExecutorEvents } from './executor-team.js';
import type { AnalyzeInput } from './turn-intake.js';

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 2));
  }
}

const user = (text: string): ChatMessage => ({ role: 'user', text, attachmentUrls: [] });
const assistant = (text: string): ChatMessage => ({ role: 'assistant', text, attachmentUrls: [] });
const turn = (text: string, extra: Partial<AnalyzeInput> = {}): AnalyzeInput => ({
  sessionKey: 's1',
  trigger: 'turn_end',
  messages: [user(text), assistant('OK')],
  isProactive: false,
  ...extra,
});

/** An LLM that answers the channel assessment with `verdicts`, the plugin selection with `plugin`. */
function llm(answers: { channels?: Record<string, boolean>; plugin?: unknown[]; duplicate?: boolean }) {
  const pluginAnswers = [...(answers.plugin ?? [])];
  return new FakeAgentRunner((input: AgentRunInput) => {
    if (input.prompt.includes('has_task')) {
      const next = pluginAnswers.length > 1 ? pluginAnswers.shift() : pluginAnswers[0];
      return { text: JSON.stringify(next ?? { has_task: false }) };
    }
    if (input.prompt.includes('can_execute')) {
      const verdicts = Object.fromEntries(
        Object.entries(answers.channels ?? {}).map(([id, can]) => [
          id,
          { can_execute: can, task_description: `do ${id}`, reason: '' },
        ]),
      );
      return { text: `\`\`\`json\n${JSON.stringify(verdicts)},\n\`\`\`` };
    }
    if (input.prompt.includes('duplicate'))
      return { text: JSON.stringify([null, answers.duplicate === true]) };
    return { text: '' };
  });
}

describe('ExecutorTeam', () => {
  let clock: FakeClock;
  let store: MemoryStore;
  let bus: Bus;
  let registry: TaskRegistry;
  let team: ExecutorTeam | undefined;
  let results: TaskRecord[];
  let notes: string[];

  beforeEach(() => {
    clock = new FakeClock(Date.now());
    store = new MemoryStore({ clock });
    bus = createBus({
      store,
      clock,
      ids: createIdGenerator(clock),
      logger: createSilentLogger(),
      config: { leaseMs: 30_000, retry: { baseMs: 5_000, capMs: 300_000, maxAttempts: 3 } },
    });
    registry = new TaskRegistry({ bus, clock, logger: createSilentLogger() });
    results = [];
    notes = [];
  });
  afterEach(async () => {
    await team?.stop();
    team = undefined;
    await registry.close();
    await bus.close();
    await store.close();
  });

  async function makeTeam(
    channels: Channel[],
    runner: FakeAgentRunner | null,
    isProactiveEnabled = true,
  ): Promise<ExecutorTeam> {
    const events: ExecutorEvents = {
      taskChanged: () => undefined,
      taskResult: (task) => results.push(task),
      notification: (_s, text) => notes.push(text),
      stateChanged: () => undefined,
    };
    const llmSettings = runner === null ? null : { runner, cwd: process.cwd(), timeoutMs: 1000, clock };
    team = new ExecutorTeam({
      registry,
      kv: bus.kv,
      clock,
      logger: createSilentLogger(),
      channels,
      llm: llmSettings,
      events,
      isProactiveEnabled,
    });
    await team.start();
    await team.flags.setAgentEnabled(true, {});
    team.flags.setFlags({
      computer_use_enabled: true,
      browser_use_enabled: true,
      user_plugin_enabled: true,
      openclaw_enabled: true,
    });
    await until(() => channels.every((c) => team?.flags.state.capabilities[c.group].ready === true));
    return team;
  }

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

  async function makeTeamOnly(channels: Channel[], runner: FakeAgentRunner): Promise<ExecutorTeam> {
    await team?.stop();
    return makeTeam(channels, runner);
  }

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

  it('runs an exclusive channel strictly one task after another, FIFO', async () => {
    const shell = new FakeChannel({
      id: 'shell',
      group: 'computer_use',
      concurrency: 'exclusive',
      isManual: true,
    });
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
    const shell = new FakeChannel({
      id: 'shell',
      group: 'computer_use',
      concurrency: 'exclusive',
      isManual: true,
    });
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
    const shell = new FakeChannel({
      id: 'shell',
      group: 'computer_use',
      concurrency: 'exclusive',
      isManual: true,
    });
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
