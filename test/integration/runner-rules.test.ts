// One musubi.yaml, every running configuration: the runner an agent gets under `musubi up` is the one it
// gets under each standalone command (yadon host, yadon serve-agent, neko serve, ignite monitor, agent
// run) — same backend and model, permission mode, max turns, per-run budget ceiling, environment — and
// every command counts the team budget in the same store.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { isProcessAlive } from '../../src/agents/process/process-group.js';
import { FAKE_BIN_DIR, readRecord, waitFor, type FakeRecord } from '../fakes/fake-cli-harness.js';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';
import { makeIgniteWorkspace, type IgniteWorkspace } from '../fixtures/ignite-workspace.js';
import { freePorts } from '../fixtures/free-ports.js';
import { ask, shortTempDir } from '../fixtures/yadon-harness.js';

const TEST_MS = 240_000;

/** What of one turn's invocation the runner rules decide (the prompts and sessions are the gateway's). */
function rulesOf(record: FakeRecord): Record<string, unknown> {
  const flag = (name: string): string | undefined => {
    const i = record.argv.indexOf(name);
    return i === -1 ? undefined : record.argv[i + 1];
  };
  return {
    cli: record.name,
    model: flag('--model'),
    permissionMode: flag('--permission-mode'),
    isBypass: record.argv.includes('--dangerously-skip-permissions'),
    maxTurns: flag('--max-turns'),
    maxBudgetUsd: flag('--max-budget-usd'),
    env: Object.fromEntries(
      ['FROM_AGENT', 'FROM_BACKEND', 'PASSED_TOKEN', 'UNRELATED_SECRET'].map((k) => [k, record.env[k]]),
    ),
  };
}

describe('runner rules - one musubi.yaml under up and every standalone command', () => {
  let dir: { dir: string; cleanup: () => Promise<void> };
  let sock: { dir: string; cleanup: () => Promise<void> };
  let ws: IgniteWorkspace;
  let musubi: BundledCli;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    musubi = await bundleCli();
  });
  afterAll(async () => {
    await musubi.remove();
  });
  beforeEach(async () => {
    dir = await shortTempDir('rr-');
    sock = await shortTempDir('rrs-');
    ws = await makeIgniteWorkspace({ workers: 1 });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    const pid = Number((await readFile(join(sock.dir, 'yadon-host.pid'), 'utf8').catch(() => '0')).trim());
    if (pid > 1 && isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
    await ws.cleanup();
    await sock.cleanup();
    await dir.cleanup();
  });

  it(
    'gives yadon-1 and ignitian_1 the same runner under up, yadon host, serve-agent, neko serve, ignite monitor and agent run',
    async () => {
      const work = join(dir.dir, 'work');
      await mkdir(work);
      const record = (agent: string): string => join(dir.dir, `${agent}.json`);
      const [httpPort, sessionPub, analyzePush, agentPush] = await freePorts(4);
      const cfg = join(dir.dir, 'musubi.yaml');
      const claude = (agent: string, permissionMode: string, extra: Record<string, string> = {}) => ({
        backend: 'claude',
        model: 'claude-test-model',
        permissionMode,
        maxTurns: 7,
        env: { FAKE_AGENT_RECORD: record(agent), FROM_AGENT: agent, ...extra },
        passEnv: ['PASSED_*'],
      });
      await writeFile(
        cfg,
        stringify({
          store: `sqlite:${join(dir.dir, 'bus.db')}`,
          log: { level: 'warn' },
          agents: {
            'yadon-1': claude('yadon-1', 'plan'),
            ignitian_1: claude('ignitian_1', 'acceptEdits', { FAKE_AGENT_DELETE_FILE: '1' }),
          },
          backends: { claude: { env: { FROM_BACKEND: 'claude' } } },
          agentConcurrency: { claude: 2 },
          teams: {
            alpha: {
              pattern: 'three-phase',
              agents: ['yadon-1', 'ignitian_1'],
              budget: { maxCostUsd: 100, maxRunCostUsd: 0.5 },
            },
          },
          gateways: {
            yadon: { enabled: true, socketDir: sock.dir, workers: 1, workDir: work },
            ignite: { enabled: true, workspace: ws.workspace, workers: 1 },
            http: { enabled: false },
          },
          neko: {
            httpPort,
            zmq: { sessionPubPort: sessionPub, analyzePushPort: analyzePush, agentPushPort: agentPush },
            assessor: { agent: 'yadon-1' },
            enableOnStart: true,
            heartbeatMs: 0,
            channels: [
              {
                id: 'tests',
                kind: 'shell',
                description: 'runs the tests',
                argv: [process.execPath, '-e', '0'],
              },
            ],
          },
        }),
      );
      const env: NodeJS.ProcessEnv = {
        PATH: `${FAKE_BIN_DIR}${delimiter}${process.env['PATH'] ?? ''}`,
        IS_SANDBOX: '1',
        LLM_BACKEND: '',
        YADON_1_BACKEND: '',
        YADON_SOCKET_DIR: sock.dir,
        YADON_COUNT: '1',
        MUSUBI_STORE: '',
        MUSUBI_LOG_LEVEL: 'warn',
        QUEUE_POLL_INTERVAL: '0.5',
        PASSED_TOKEN: 'passed',
        UNRELATED_SECRET: 'must-not-leak',
      };
      const cli = (args: string[]) =>
        musubi.run(['-c', cfg, ...args], { cwd: dir.dir, env, timeoutMs: 60_000 });
      const serve = async (args: string[], ready: string | undefined): Promise<() => Promise<void>> => {
        const child = spawn(process.execPath, [musubi.entry, '-c', cfg, ...args], {
          cwd: dir.dir,
          env: { ...process.env, NO_COLOR: '1', ...env },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        children.push(child);
        let out = '';
        child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
        child.stderr?.resume();
        if (ready !== undefined) await waitFor(() => out.includes(ready), 30_000, `${args.join(' ')} up`);
        return async () => {
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGTERM');
          await exited;
        };
      };
      const spent = async (agent: string): Promise<number> => {
        const events = await cli(['bus', 'events', '--json', '--limit', '100000']);
        return events.stdout
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as { type: string; data: { agent?: string } })
          .filter((e) => e.type === 'budget.spent' && e.data.agent === agent).length;
      };
      /** Runs one configuration's turn of `agent` and resolves the rules it ran by. */
      const turnOf = async (
        agent: string,
        turn: () => Promise<unknown>,
      ): Promise<Record<string, unknown>> => {
        await rm(record(agent), { force: true });
        const before = await spent(agent);
        await turn();
        await waitFor(async () => (await readFile(record(agent)).catch(() => null)) !== null, 30_000, 'turn');
        await waitFor(async () => (await spent(agent)) > before, 30_000, 'budget counted in the store');
        return rulesOf(await readRecord(record(agent)));
      };
      let tasks = 0;
      const askYadon1 = (socket: string) => async () => {
        const id = `t${++tasks}`;
        const reply = await ask(socket, { type: 'task', id, payload: { instruction: 'task for 1' } });
        expect(reply).toMatchObject({ id, from: 'yadon-1' });
      };
      const queueFor = (agent: string) => () =>
        ws.send({ from: 'coordinator', to: agent, type: 'task_assignment', body: 'task_id: "t1"\n' });
      const yadon1Socket = join(sock.dir, 'yadon-agent-yadon-1.sock');

      const stopUp = await serve(['up'], 'musubi hub up');
      const underUp = {
        yadon: await turnOf('yadon-1', askYadon1(yadon1Socket)),
        ignite: await turnOf('ignitian_1', queueFor('ignitian_1')),
      };
      await stopUp();
      expect(underUp.yadon).toEqual({
        cli: 'claude',
        model: 'claude-test-model',
        permissionMode: 'plan',
        isBypass: false,
        maxTurns: '7',
        maxBudgetUsd: '0.5',
        env: {
          FROM_AGENT: 'yadon-1',
          FROM_BACKEND: 'claude',
          PASSED_TOKEN: 'passed',
          UNRELATED_SECRET: undefined,
        },
      });
      expect(underUp.ignite).toMatchObject({
        permissionMode: 'acceptEdits',
        env: { FROM_AGENT: 'ignitian_1' },
      });

      expect(await cli(['yadon', 'host', work])).toMatchObject({ code: 0 });
      expect(await turnOf('yadon-1', askYadon1(yadon1Socket))).toEqual(underUp.yadon);
      expect(await cli(['yadon', 'stop'])).toMatchObject({ code: 0 });

      const agentSocket = join(sock.dir, 'one.sock');
      const stopAgent = await serve(
        [
          'yadon',
          'serve-agent',
          '--role',
          'worker',
          '--number',
          '1',
          '--socket',
          agentSocket,
          '--work-dir',
          work,
        ],
        'listening on',
      );
      expect(await turnOf('yadon-1', askYadon1(agentSocket))).toEqual(underUp.yadon);
      await stopAgent();

      const stopNeko = await serve(['neko', 'serve'], 'agent server up');
      const analyze = () => cli(['neko', 'analyze', 'please run the tests', '--wait-ms', '5000']);
      expect(await turnOf('yadon-1', analyze)).toEqual(underUp.yadon);
      await stopNeko();

      expect(await turnOf('yadon-1', () => cli(['agent', 'run', '--agent', 'yadon-1', 'hello']))).toEqual(
        underUp.yadon,
      );

      const stopMonitor = await serve(['ignite', 'monitor', '-w', ws.workspace], undefined);
      expect(await turnOf('ignitian_1', queueFor('ignitian_1'))).toEqual(underUp.ignite);
      await stopMonitor();

      expect(
        await turnOf('ignitian_1', () => cli(['agent', 'run', '--agent', 'ignitian_1', 'hello'])),
      ).toEqual(underUp.ignite);
    },
    TEST_MS,
  );
});
