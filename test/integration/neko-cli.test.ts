import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createSystemClock } from '../../src/core/clock.js';
import { startNeko, until, type NekoHarness } from '../fixtures/neko-harness.js';
import { testPlugins } from '../fixtures/neko-plugins.js';
import { freePorts } from '../fixtures/free-ports.js';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';

describe('musubi neko CLI', () => {
  let dir: string;
  let h: NekoHarness | undefined;
  let serve: ChildProcess | undefined;
  let musubi: BundledCli;
  beforeAll(async () => {
    musubi = await bundleCli();
  });
  afterAll(async () => {
    await musubi.remove();
  });
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'musubi-neko-cli-'))));
  afterEach(async () => {
    await h?.close();
    h = undefined;
    if (serve !== undefined && serve.exitCode === null) {
      const exited = new Promise((resolve) => serve?.once('exit', resolve));
      serve.kill('SIGTERM');
      await exited;
    }
    serve = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  it('cancel prints the response and exits 0; against a stopped server it exits 1 with the not-reachable message', async () => {
    const plugins = testPlugins(createSystemClock());
    h = await startNeko({ channels: [plugins.channel] });
    const started = (await h.http('POST', '/plugin/execute', { plugin_id: 'slow' })).body;
    const port = String(h.httpPort);
    const run = await musubi.run(['neko', 'cancel', String(started['task_id']), '--port', port], {
      cwd: dir,
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      `${JSON.stringify({ success: true, task_id: started['task_id'], status: 'cancelled' }, null, 2)}\n`,
    );
    const again = await musubi.run(['neko', 'cancel', String(started['task_id']), '--port', port], {
      cwd: dir,
    });
    expect(again.code).toBe(1); // success: false
    await h.close();
    h = undefined;
    const down = await musubi.run(['neko', 'cancel', 'x', '--port', port], { cwd: dir });
    expect(down.code).toBe(1);
    expect(down.stderr).toBe(`error: agent server not reachable at 127.0.0.1:${port}\n`);
  });

  it('serve runs a configured shell channel for a turn played by analyze', async () => {
    const [httpPort, sessionPub, analyzePush, agentPush] = await freePorts(4);
    const script =
      "let s='';process.stdin.on('data',(c)=>(s+=c));process.stdin.on('end',()=>console.log('ran: '+s))";
    await writeFile(
      join(dir, 'musubi.yaml'),
      stringify({
        store: 'sqlite:bus.db',
        log: { level: 'warn' },
        neko: {
          httpPort,
          zmq: { sessionPubPort: sessionPub, analyzePushPort: analyzePush, agentPushPort: agentPush },
          assessor: { agent: 'scripted' },
          enableOnStart: true,
          heartbeatMs: 0,
          channels: [
            {
              id: 'tests',
              kind: 'shell',
              description: 'runs the project tests',
              argv: [process.execPath, '-e', script],
            },
          ],
        },
      }),
    );
    const child = spawn(process.execPath, [musubi.entry, 'neko', 'serve'], {
      cwd: dir,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    serve = child;
    let out = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr?.resume();
    await until(() => out.includes('agent server up'), 20_000);
    const flags = await musubi.run(['neko', 'flags'], { cwd: dir });
    expect(JSON.parse(flags.stdout)).toMatchObject({
      success: true,
      analyzer_enabled: true,
      agent_flags: { computer_use_enabled: true },
    });
    const analyze = await musubi.run(
      ['neko', 'analyze', 'please run the tests', '--session', 'cli-1', '--wait-ms', '10000'],
      { cwd: dir },
    );
    expect(analyze.code).toBe(0);
    const lines = analyze.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({ acked: true, event_id: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(lines.at(-1)).toMatchObject({
      event_type: 'task_result',
      lanlan_name: 'cli-1',
      status: 'completed',
      text: 'ran: please run the tests',
    });
    const tasks = JSON.parse((await musubi.run(['neko', 'tasks'], { cwd: dir })).stdout) as {
      tasks: unknown[];
    };
    expect(tasks.tasks).toHaveLength(1);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
