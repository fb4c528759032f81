import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../src/agents/process/process-group.js';
import { formatProgressLine } from '../../src/cli/ignite/monitor-command.js';
import { FAKE_BIN_DIR, readPids, waitFor } from '../fakes/fake-cli-harness.js';
import { IGNITE_FIXTURES, maskVolatile } from '../fixtures/ignite-tool-io.js';
import { makeIgniteWorkspace, type IgniteWorkspace } from '../fixtures/ignite-workspace.js';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';

const PROMPT = /^新しいメッセージが来ました。(\/\S+\.mime) を読んで処理してください。$/;

describe('musubi ignite (CLI processes)', () => {
  let ws: IgniteWorkspace;
  let musubi: BundledCli;
  const children: ChildProcess[] = [];
  const pidsToReap: number[] = [];

  const monitorEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
    ...process.env,
    PATH: `${FAKE_BIN_DIR}${delimiter}${process.env['PATH'] ?? ''}`,
    QUEUE_POLL_INTERVAL: '0.5',
    RETRY_BASE_DELAY: '0.1',
    RETRY_MAX_DELAY: '0.2',
    MUSUBI_LOG_LEVEL: 'warn',
    ...extra,
  });
  const startMonitor = (env: NodeJS.ProcessEnv): ChildProcess => {
    const child = spawn(
      process.execPath,
      [
        musubi.entry,
        '-c',
        join(ws.workspace, 'musubi.yaml'),
        'ignite',
        'monitor',
        '-w',
        ws.workspace,
        '--backend',
        'claude',
      ],
      {
        cwd: ws.workspace,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout?.resume();
    child.stderr?.resume();
    children.push(child);
    return child;
  };
  const exited = (child: ChildProcess): Promise<number | null> =>
    child.exitCode !== null
      ? Promise.resolve(child.exitCode)
      : new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  const agentConfig = async (env: Record<string, string>): Promise<void> => {
    const lines = Object.entries(env).map(([k, v]) => `      ${k}: ${JSON.stringify(v)}`);
    await writeFile(
      join(ws.workspace, 'musubi.yaml'),
      `store: sqlite:.ignite/state/test-bus.db\nagents:\n  ignitian:\n    backend: claude\n    env:\n${lines.join('\n')}\n`,
    );
  };
  const invocations = async (log: string): Promise<string[]> =>
    (await readFile(log, 'utf8').catch(() => ''))
      .split('\n')
      .filter((l) => l !== '')
      .map(
        (l) => PROMPT.exec(String((JSON.parse(l) as { prompt: unknown }).prompt).trim())?.[1] ?? 'bad prompt',
      );

  beforeAll(async () => {
    musubi = await bundleCli();
  });
  afterAll(async () => {
    await musubi.remove();
  });
  beforeEach(async () => {
    ws = await makeIgniteWorkspace({ workers: 2 });
  });
  afterEach(async () => {
    for (const c of children.splice(0)) {
      if (c.exitCode === null && c.signalCode === null) {
        c.kill('SIGKILL');
        await exited(c);
      }
    }
    for (const pid of pidsToReap.splice(0)) if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
    // Every agent process any monitor started must be gone (the fakes log their pid per invocation).
    const logged = (await readFile(join(ws.workspace, 'agent.log'), 'utf8').catch(() => ''))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => Number((JSON.parse(l) as { pid: unknown }).pid));
    await waitFor(() => logged.every((pid) => !isProcessAlive(pid)), 5000, 'no agent process left');
    await ws.cleanup();
  });

  it('runs the mime and send tools through `musubi ignite` with their grammar and exit codes', async () => {
    const build = await musubi.run(
      [
        'ignite',
        'mime',
        'build',
        '--from',
        'strategist',
        '--to',
        'coordinator',
        '--type',
        'task_list',
        '--body',
        'hello: world',
      ],
      { cwd: ws.workspace, env: { TZ: 'Asia/Tokyo' } },
    );
    expect(build.code).toBe(0);
    expect(maskVolatile(build.stdout)).toBe(
      maskVolatile(await readFile(join(IGNITE_FIXTURES, 'F1-build-minimal.mime'), 'utf8')),
    );
    const bad = await musubi.run(
      ['ignite', 'mime', 'build', '-c', 'x', '--from', 'a', '--to', 'b', '--type', 't'],
      { cwd: ws.workspace },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('ignite_mime: error: unrecognized arguments: -c x');
    const send = await musubi.run(['ignite', 'send', 'a', 'b'], { cwd: ws.workspace });
    expect(send.code).toBe(1);
    expect(send.stdout).toContain('musubi ignite send <type> <from> <to> [options]');
  });

  it('delivers a queued file to a fake agent CLI that deletes it: queue -> claim -> deliver -> gone', async () => {
    const log = join(ws.workspace, 'agent.log');
    await agentConfig({ FAKE_AGENT_DELETE_FILE: '1', FAKE_AGENT_LOG: log });
    const monitor = startMonitor(monitorEnv());
    const path = await ws.send({
      from: 'coordinator',
      to: 'ignitian_1',
      type: 'task_assignment',
      body: 'task_id: "t1"\n',
    });
    const name = path.slice(path.lastIndexOf('/') + 1);
    await waitFor(async () => (await invocations(log)).length === 1, 20_000, 'agent invoked');
    expect(await invocations(log)).toEqual([join(ws.processed('ignitian_1'), name)]);
    await waitFor(
      async () => (await readdir(ws.processed('ignitian_1'))).length === 0,
      10_000,
      'file deleted by the agent',
    );
    expect(await ws.list(ws.root('ignitian_1'))).toEqual([]);
    const second = startMonitor(monitorEnv());
    expect(await exited(second)).toBe(1);
    monitor.kill('SIGTERM');
    expect(await exited(monitor)).toBe(143);
  }, 60_000);

  it('redelivers a message once after the monitor is SIGKILLed mid-turn and restarted', async () => {
    const log = join(ws.workspace, 'agent.log');
    const pids = join(ws.workspace, 'pids');
    await agentConfig({ FAKE_AGENT_DELAY_MS: '30000', FAKE_AGENT_LOG: log, FAKE_AGENT_PID_FILE: pids });
    const first = startMonitor(monitorEnv({ RETRY_TIMEOUT: '1' }));
    const path = await ws.send({
      from: 'coordinator',
      to: 'ignitian_1',
      type: 'task_assignment',
      body: 'task_id: "t1"\n',
    });
    const name = path.slice(path.lastIndexOf('/') + 1);
    await waitFor(async () => (await invocations(log)).length === 1, 20_000, 'first turn running');
    first.kill('SIGKILL');
    await exited(first);
    const orphan = (await readPids(pids))['main'];
    if (orphan !== undefined) pidsToReap.push(orphan);
    await agentConfig({ FAKE_AGENT_DELETE_FILE: '1', FAKE_AGENT_LOG: log });
    const second = startMonitor(monitorEnv({ RETRY_TIMEOUT: '1' }));
    await waitFor(async () => (await invocations(log)).length === 2, 20_000, 'redelivered after restart');
    const text = await readFile(join(ws.workspace, 'agent.log'), 'utf8');
    expect(text.split('\n').filter((l) => l.includes(name))).toHaveLength(2);
    await waitFor(
      async () => (await readdir(ws.processed('ignitian_1'))).length === 0,
      10_000,
      'deleted after the retry',
    );
    await ws.send({
      from: 'coordinator',
      to: 'ignitian_1',
      type: 'task_assignment',
      body: 'task_id: "barrier"\n',
    });
    await waitFor(async () => (await invocations(log)).length === 3, 20_000, 'barrier delivered');
    expect((await invocations(log)).filter((p) => p.endsWith(name))).toHaveLength(2);
    second.kill('SIGTERM');
    expect(await exited(second)).toBe(143);
    if (orphan !== undefined && isProcessAlive(orphan)) process.kill(orphan, 'SIGKILL');
    await waitFor(() => orphan === undefined || !isProcessAlive(orphan), 5000, 'orphan gone');
  }, 90_000);

  it('writes the original bodies for plan, notify and work-on, byte for byte but for Message-ID and Date', async () => {
    const file = async (args: readonly string[]): Promise<string> => {
      const run = await musubi.run(['ignite', ...args, '-w', ws.workspace], { cwd: ws.workspace });
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      const path = /^✓ (\S+)\n$/.exec(run.stdout)?.[1] ?? '';
      return maskVolatile(await readFile(path, 'utf8'));
    };
    const headers = (to: string, type: string, priority: string, extra: readonly string[] = []): string =>
      [
        'MIME-Version: 1.0',
        'Message-ID: <X>',
        'From: user',
        `To: ${to}`,
        'Date: <X>',
        `X-IGNITE-Type: ${type}`,
        `X-IGNITE-Priority: ${priority}`,
        ...extra,
        'Content-Type: text/x-yaml; charset=utf-8',
        'Content-Transfer-Encoding: 8bit',
        '',
        '',
      ].join('\n');
    expect(await file(['plan', '認証機能を実装 "v2"', '-c', 'JWT認証、セッション管理'])).toBe(
      `${headers('leader', 'user_goal', 'high')}goal: "認証機能を実装 \\"v2\\""\ncontext: "JWT認証、セッション管理"`,
    );
    expect(await file(['plan', 'READMEファイルを作成する'])).toBe(
      `${headers('leader', 'user_goal', 'high')}goal: "READMEファイルを作成する"`,
    );
    expect(await file(['notify', 'ignitian-2', 'line 1\nline 2'])).toBe(
      `${headers('ignitian_2', 'notification', 'normal')}message: |\n  line 1\n  line 2`,
    );
    expect(await file(['work-on', '42', '-r', 'owner/repo'])).toBe(
      `${headers('leader', 'github_task', 'high', ['X-IGNITE-Repository: owner/repo', 'X-IGNITE-Issue: 42'])}` +
        'trigger: auto\nrepository: owner/repo\nissue_number: 42\nrequested_by: user\n' +
        'trigger_comment: "work-onコマンドによる手動トリガー"\nbranch_prefix: "ignite/"\n' +
        'url: "https://github.com/owner/repo/issues/42"',
    );
    expect(await ws.list(ws.root('ignitian_2'))).toEqual([expect.stringMatching(/^notify_\d{16}\.mime$/)]);
  }, 60_000);

  it('shows the deliveries the bus recorded after the agents deleted their files, and only known progress', async () => {
    const log = join(ws.workspace, 'agent.log');
    await agentConfig({ FAKE_AGENT_DELETE_FILE: '1', FAKE_AGENT_LOG: log });
    const monitor = startMonitor(monitorEnv());
    await ws.send({
      from: 'coordinator',
      to: 'ignitian_1',
      type: 'task_assignment',
      body: 'task_id: "t1"\n',
    });
    await waitFor(async () => (await invocations(log)).length === 1, 20_000, 'first turn');
    await ws.send({
      from: 'coordinator',
      to: 'ignitian_1',
      type: 'progress_update',
      body: 'stage: working\nsummary: "halfway"\ntotal_tasks: 2\n',
    });
    await waitFor(async () => (await invocations(log)).length === 2, 20_000, 'second turn');
    await waitFor(
      async () => (await readdir(ws.processed('ignitian_1'))).length === 0,
      10_000,
      'files deleted by the agent',
    );
    const status = async (json = false) =>
      musubi.run(
        [
          '-c',
          join(ws.workspace, 'musubi.yaml'),
          'ignite',
          'status',
          '-w',
          ws.workspace,
          ...(json ? ['--json'] : []),
        ],
        { cwd: ws.workspace },
      );
    // The delivered event follows the agent's exit, which may come after the file is gone.
    await waitFor(
      async () => /^ignitian_1 +0 +0 +0 +2$/m.test((await status()).stdout),
      20_000,
      'two delivered',
    );
    const run = await status();
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^queue +pending +processing +retrying +delivered$/m);
    expect(run.stdout).toMatch(/^leader +0 +0 +0 +0$/m);
    expect(run.stdout).toContain('Progress Update\n- Tasks: 2 in total\n- Summary: halfway\n- Time: ');
    expect(run.stdout).not.toMatch(/\?|N\/A/);
    const json = JSON.parse((await status(true)).stdout) as { queues: Array<Record<string, unknown>> };
    expect(json.queues.find((q) => q['name'] === 'ignitian_1')).toEqual({
      name: 'ignitian_1',
      pending: 0,
      processing: 0,
      retrying: 0,
      delivered: 2,
    });
    monitor.kill('SIGTERM');
    expect(await exited(monitor)).toBe(143);
  }, 90_000);

  it('prints plain progress lines with NO_COLOR or TERM=dumb and coloured ones otherwise (74)', () => {
    expect(formatProgressLine('stage=a percent=1 message=m', false, { NO_COLOR: '1' }, true)).toBe(
      'stage=a percent=1 message=m\n',
    );
    expect(formatProgressLine('x', false, { TERM: 'dumb' }, true)).toBe('x\n');
    expect(formatProgressLine('x', false, {}, false)).toBe('x\n');
    expect(formatProgressLine('x', true, {}, true)).toMatch(
      new RegExp(`^${String.fromCharCode(27)}\\[\\d+mx`),
    );
  });
});
