// yadon CLI backends: `start` with and without --multi-llm (coordinator, SIGINT) and per-worker agent backends.
import { chmod, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../src/agents/process/process-group.js';
import { FAKE_BIN_DIR, readRecord, waitFor } from '../fakes/fake-cli-harness.js';
import { runCli } from '../fixtures/run-cli.js';
import {
  CLI_TEST_MS,
  RESET,
  YELLOW,
  startYadon,
  yadon,
  yadonCliSession,
  yadonEnv,
} from '../fixtures/yadon-cli-session.js';
import { ask, shortTempDir } from '../fixtures/yadon-harness.js';

const { cleanups, dirs, close } = yadonCliSession();
afterEach(close);

describe('yadon CLI', () => {
  it(
    'start --multi-llm assigns backends, keeps a preset one, launches the coordinator and stops the host after it',
    async () => {
      const { sock, work } = await dirs();
      const bin = await shortTempDir('ydb-');
      cleanups.push(bin.cleanup);
      const record = join(bin.dir, 'coordinator.json');
      await writeFile(
        join(bin.dir, 'claude'),
        `#!${process.execPath}\nconst fs = require('fs');\nconst info = fs.readFileSync(process.env.YADON_SOCKET_DIR + '/yadon-host.json', 'utf8');\nfs.writeFileSync(${JSON.stringify(record)}, JSON.stringify({ argv: process.argv.slice(2), cwd: process.cwd(), role: process.env.AGENT_ROLE, level: process.env.AGENT_ROLE_LEVEL, host: JSON.parse(info) }));\nprocess.exit(3);\n`,
      );
      await chmod(join(bin.dir, 'claude'), 0o755);
      // IS_SANDBOX=1: as root (CI) claude accepts --dangerously-skip-permissions only inside a sandbox.
      const env = yadonEnv(sock, {
        IS_SANDBOX: '1',
        LLM_BACKEND: 'claude',
        YADON_COUNT: '4',
        YADON_2_BACKEND: 'claude',
        PATH: `${bin.dir}${delimiter}${process.env['PATH'] ?? ''}`,
      });
      const run = await runCli(['yadon', '--multi-llm', 'start', work], {
        cwd: work,
        env,
        timeoutMs: 60_000,
      });
      expect(run.code).toBe(3);
      const lines = run.stdout.split('\n');
      expect(lines.slice(0, 7)).toEqual([
        'ヤドン・エージェント 起動中...',
        'ヤドン数: 4',
        'マルチLLMモード:',
        '  ヤドン1: copilot',
        '  ヤドン2: claude',
        '  ヤドン3: claude-opus',
        '  ヤドン4: opencode',
      ]);
      expect(run.stdout).toContain(`${YELLOW}!${RESET} agent CLI 'copilot' not found on PATH (yadon-1)`);
      expect(run.stdout).toContain('エージェントソケット待機中... OK\n');
      expect(run.stdout.endsWith('停止完了\n')).toBe(true);
      const seen = JSON.parse(await readFile(record, 'utf8')) as {
        argv: string[];
        cwd: string;
        role: string;
        level: string;
        host: { workerBackends: Record<string, string>; workDir: string };
      };
      expect(seen.argv.slice(0, 3)).toEqual(['--model', 'opus', '--append-system-prompt']);
      expect(seen.argv[3]).toContain('yadon _send "<task>"');
      expect(seen.argv[3]).toContain('yadon _result <task id>');
      expect(seen.argv.slice(4)).toEqual(['--dangerously-skip-permissions']);
      expect(seen).toMatchObject({ cwd: work, role: 'yadoking', level: 'coordinator' });
      expect(seen.host).toMatchObject({
        workDir: work,
        workerBackends: { '1': 'copilot', '2': 'claude', '3': 'claude-opus', '4': 'opencode' },
      });
      expect((await readdir(sock)).filter((n) => n.endsWith('.sock') || n.endsWith('.pid'))).toEqual([]);
    },
    CLI_TEST_MS,
  );

  it(
    'start without --multi-llm keeps YADON_<n>_BACKEND from the host and stops on SIGINT',
    async () => {
      const { sock, work } = await dirs();
      const env = yadonEnv(sock, { YADON_COUNT: '2', YADON_1_BACKEND: 'gemini' });
      const run = startYadon(['start', work], work, env);
      await waitFor(() => run.stdout().includes('Ctrl-C'), 40_000, 'the host to be up');
      const info = JSON.parse(await readFile(join(sock, 'yadon-host.json'), 'utf8')) as {
        workerBackends: object;
        pid: number;
      };
      expect(info.workerBackends).toEqual({});
      run.child.kill('SIGINT');
      const done = await run.exited;
      expect(done.code).toBe(0);
      expect(done.stdout.endsWith('停止完了\n')).toBe(true);
      expect(isProcessAlive(info.pid)).toBe(false);
    },
    CLI_TEST_MS,
  );

  it(
    'runs worker 2 on its own backend (gemini, worker-tier model) and the default claude worker headlessly',
    async () => {
      const { sock, work } = await dirs();
      await mkdir(join(work, 'cfg'));
      const records = [join(work, 'cfg', 'w1.json'), join(work, 'cfg', 'w2.json')];
      await writeFile(
        join(work, 'cfg', 'musubi.yaml'),
        `agents:\n  yadon-1:\n    env: { FAKE_AGENT_RECORD: ${JSON.stringify(records[0])} }\n  yadon-2:\n    env: { FAKE_AGENT_RECORD: ${JSON.stringify(records[1])} }\n`,
      );
      // IS_SANDBOX=1: as root (CI) claude accepts --dangerously-skip-permissions only inside a sandbox.
      const env = yadonEnv(sock, {
        IS_SANDBOX: '1',
        LLM_BACKEND: 'claude',
        YADON_COUNT: '2',
        YADON_2_BACKEND: 'gemini',
        PATH: `${FAKE_BIN_DIR}${delimiter}${process.env['PATH'] ?? ''}`,
      });
      const host = await runCli(['--config', join(work, 'cfg', 'musubi.yaml'), 'yadon', 'host', work], {
        cwd: work,
        env,
        timeoutMs: 60_000,
      });
      expect(host.code).toBe(0);
      const [one, two] = await Promise.all(
        [1, 2].map((n) =>
          ask(join(sock, `yadon-agent-yadon-${n}.sock`), {
            type: 'task',
            id: `t${n}`,
            payload: { instruction: `task for ${n}` },
          }),
        ),
      );
      expect(one).toMatchObject({ status: 'success', from: 'yadon-1' });
      expect(two).toMatchObject({ status: 'success', from: 'yadon-2' });
      const claude = await readRecord(records[0] ?? '');
      expect(claude.name).toBe('claude');
      expect(claude.argv).toEqual(
        expect.arrayContaining(['-p', '--model', 'haiku', '--dangerously-skip-permissions']),
      );
      expect(claude.stdin).toContain('タスク:\ntask for 1');
      expect(claude.cwd).toBe(work);
      const gemini = await readRecord(records[1] ?? '');
      expect(gemini.name).toBe('gemini');
      expect(gemini.argv).toEqual(expect.arrayContaining(['flash', '--yolo']));
      expect(gemini.stdin).toContain('タスク:\ntask for 2');
      expect(await yadon(['stop'], work, env)).toMatchObject({ code: 0 });
    },
    CLI_TEST_MS,
  );
});
