import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';
import { ask, freePort, startServer, waitFor, type TestServer } from '../fixtures/agent-sync-harness.js';

let musubi: BundledCli;
beforeAll(async () => (musubi = await bundleCli()));
afterAll(() => musubi.remove());

/** Collects a child's output and exit code. */
function watch(child: ChildProcessWithoutNullStreams): { out: () => string; exited: Promise<number | null> } {
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  return { out: () => out, exited: new Promise((resolve) => child.once('exit', resolve)) };
}

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

describe('musubi agent-sync monitor, notifier, check-notify and clear-notify', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    await ask(server.port, { cmd: 'join', agent: 'agent-a' });
    await ask(server.port, { cmd: 'join', agent: 'agent-b' });
  });
  afterAll(() => server.close());

  it('monitor shows phase, pending mail, the discussion tail and events, and exits on SHUTDOWN', async () => {
    await ask(server.port, { cmd: 'send', to: 'agent-b', text: 'mail' });
    await ask(server.port, { cmd: 'set-phase', phase: 'DISCUSS' });
    await ask(server.port, { cmd: 'discuss', agent: 'agent-a', text: 'x'.repeat(100) });
    const child = musubi.start(
      ['agent-sync', 'monitor', '--interval', '0.1', '--port', String(server.port)],
      {
        cwd: server.cwd,
      },
    );
    const { out, exited } = watch(child);
    await waitFor(() => out().includes('DISCUSS'), 15_000);
    await ask(server.port, { cmd: 'set-phase', phase: 'TEST' });
    await waitFor(() => out().includes('phase DISCUSS -> TEST'), 15_000);
    await ask(server.port, { cmd: 'shutdown' });
    expect(await exited).toBe(0);
    const text = out();
    expect(text).toContain('Phase: \u{1F4AC} DISCUSS');
    expect(text).toMatch(/agent-b +\u{1F4EC} \d+ pending/u);
    expect(text).toMatch(/\[R1 \d\d:\d\d:\d\d\] agent-a: x{77}\.\.\.\n/);
    expect(text).not.toContain('\x1b[');
    expect(text.trimEnd().endsWith('\u{1F6D1} Server in SHUTDOWN. Monitor exiting.')).toBe(true);
    await ask(server.port, { cmd: 'set-phase', phase: 'IMPLEMENT' });
  });

  it('monitor waits for an unreachable server', async () => {
    const port = await freePort();
    const child = musubi.start(['agent-sync', 'monitor', '--interval', '0.1', '--port', String(port)], {
      cwd: server.cwd,
    });
    const { out, exited } = watch(child);
    await waitFor(() => out().includes(`\u23F3 Waiting for server on port ${port}...`), 15_000);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('notifier writes phase-change and shutdown notifications, heartbeats and never consumes mail', async () => {
    const dir = server.cwd;
    const env = { AGENT_SYNC_NOTIFY_DIR: dir };
    const before = (await ask(server.port, { cmd: 'peek', agent: 'agent-a' }))['pending'] as number;
    const child = musubi.start(
      ['agent-sync', 'notifier', 'agent-a', '--interval', '0.1', '--port', String(server.port)],
      {
        cwd: dir,
        env,
      },
    );
    const { out, exited } = watch(child);
    const heartbeat = async (): Promise<boolean> => {
      const data = (await ask(server.port, { cmd: 'status' }))['data'] as { agents: Record<string, object> };
      return 'last_heartbeat' in (data.agents['agent-a'] ?? {});
    };
    await waitFor(heartbeat, 15_000);
    await ask(server.port, { cmd: 'set-phase', phase: 'TEST' });
    const log = join(dir, '.notifications_agent-a.jsonl');
    await waitFor(() => exists(log), 15_000);
    const checked = await musubi.run(['agent-sync', 'check-notify', 'agent-a'], { cwd: dir, env });
    const report = JSON.parse(checked.stdout) as {
      notifications: Array<Record<string, unknown>>;
      count: number;
    };
    expect(report.count).toBe(1);
    expect(report.notifications[0]).toMatchObject({
      type: 'phase_change',
      from_phase: 'IMPLEMENT',
      to_phase: 'TEST',
      round: 1,
    });
    expect(checked.stdout.startsWith('{\n  "notifications": [')).toBe(true);
    expect(await exists(join(dir, '.notify_bell_agent-a'))).toBe(false);
    expect((await musubi.run(['agent-sync', 'check-notify', 'agent-a'], { cwd: dir, env })).stdout).toBe(
      '{\n  "notifications": [],\n  "count": 0\n}\n',
    );
    await ask(server.port, { cmd: 'shutdown' });
    expect(await exited).toBe(0);
    expect(out()).toContain('\x07');
    const lines = (await readFile(log, 'utf8')).trim().split('\n');
    expect(JSON.parse(lines.at(-1) ?? '{}')).toMatchObject({ type: 'shutdown' });
    expect((await ask(server.port, { cmd: 'peek', agent: 'agent-a' }))['pending']).toBe(before + 2);
    expect((await musubi.run(['agent-sync', 'clear-notify', 'agent-a'], { cwd: dir, env })).stdout).toBe(
      'OK\n',
    );
    expect(await exists(log)).toBe(false);
  });

  it('check-notify and clear-notify refuse an agent name with a path separator and touch nothing', async () => {
    const dir = join(server.cwd, 'notify-guard');
    await mkdir(dir, { recursive: true });
    const victim = join(server.cwd, 'victim');
    await writeFile(victim, 'keep');
    await writeFile(`${victim}.jsonl`, 'keep');
    const env = { AGENT_SYNC_NOTIFY_DIR: dir };
    for (const command of ['clear-notify', 'check-notify']) {
      const run = await musubi.run(['agent-sync', command, '/../../victim'], { cwd: server.cwd, env });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('cannot name a notification file');
    }
    expect(await readFile(victim, 'utf8')).toBe('keep');
    expect(await readFile(`${victim}.jsonl`, 'utf8')).toBe('keep');
  });
});
