import { spawn } from 'node:child_process';
import { chmod, lstat, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../src/agents/process/process-group.js';
import { FAKE_BIN_DIR, readRecord, waitFor } from '../fakes/fake-cli-harness.js';
import { runCli, TSX_LOADER, type CliRun } from '../fixtures/run-cli.js';
import { ask, shortTempDir } from '../fixtures/yadon-harness.js';

const YADON_ENTRY = fileURLToPath(new URL('../../src/cli/yadon-main.ts', import.meta.url));
const RED = '\u001b[1;31m';
const YELLOW = '\u001b[1;33m';
const RESET = '\u001b[0m';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A fresh socket dir and project dir; any host left behind is killed at the end of the test. */
async function dirs(): Promise<{ sock: string; work: string }> {
  const sock = await shortTempDir('ydc-');
  const work = await shortTempDir('ydw-');
  cleanups.push(async () => {
    const pid = Number((await readFile(join(sock.dir, 'yadon-host.pid'), 'utf8').catch(() => '0')).trim());
    if (pid > 1 && isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
    await sock.cleanup();
    await work.cleanup();
  });
  return { sock: sock.dir, work: work.dir };
}

/** The environment of a yadon CLI run: explicit, nothing inherited from the test runner's yadon setup. */
function yadonEnv(sock: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    YADON_SOCKET_DIR: sock,
    YADON_COUNT: '',
    YADON_THEME: '',
    LLM_BACKEND: 'scripted',
    MUSUBI_STORE: 'memory:',
    MUSUBI_LOG_LEVEL: 'warn',
    ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`YADON_${i + 1}_BACKEND`, ''])),
    ...extra,
  };
}

const yadon = (args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<CliRun> =>
  runCli(['yadon', ...args], { cwd, env, timeoutMs });

/** Starts `yadon <args>` through the `yadon` entry and lets the test watch its output as it runs. */
function startYadon(args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, YADON_ENTRY, ...args], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<CliRun>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, stdout: () => stdout, exited };
}

// Each test starts several Node processes (CLI, daemon): generous limits for a loaded 2-core machine.
const CLI_TEST_MS = 120_000;

describe('yadon CLI', () => {
  it(
    'reports a missing host the way yadon-agents does (also through the yadon entry)',
    async () => {
      const { sock, work } = await dirs();
      const env = yadonEnv(sock);
      const [status, statusJson, send, say, quietSay, badSay, result, viaAlias, theme] = await Promise.all([
        yadon(['status'], work, env),
        yadon(['_status'], work, env),
        yadon(['_send', '- do it'], work, env),
        yadon(['say', '9', 'hi'], work, env),
        yadon(['_say', '9', 'hi'], work, env),
        yadon(['say', 'x', 'hi'], work, env),
        yadon(['_result', 'task-1'], work, env),
        new Promise<CliRun>((resolve) => {
          const run = startYadon(['_status', 'yadon-1'], work, env);
          void run.exited.then(resolve);
        }),
        yadon(['start', work], work, { ...env, YADON_THEME: 'pokemon' }),
      ]);
      expect(status).toMatchObject({ code: 1 });
      expect(status.stdout).toBe(
        `ステータス確認中 (yadoran, yadon-1, yadon-2, yadon-3, yadon-4)...\n${RED}エラー${RESET}: [Errno 2] No such file or directory\n`,
      );
      expect(statusJson).toMatchObject({
        code: 0,
        stdout: '{"success": false, "message": "[Errno 2] No such file or directory", "data": null}\n',
      });
      expect(send.code).toBe(0);
      expect(send.stdout).toMatch(
        new RegExp(
          `^\\{"success": false, "message": "yadoranソケットが見つかりません \\(${sock}/yadon-agent-yadoran.sock\\)", "data": null, "task_id": "task-\\d{8}-\\d{6}-[0-9a-f]{4}"\\}\\n$`,
        ),
      );
      expect(say).toMatchObject({
        code: 1,
        stdout: `${YELLOW}警告${RESET}: ペットソケットが見つかりません (${sock}/yadon-pet-9.sock)\nペットが起動していないか、番号が間違っている可能性があります\n`,
      });
      expect(quietSay).toMatchObject({ code: 0, stdout: '', stderr: '' });
      expect(badSay.code).toBe(2);
      expect(result.stdout).toBe(
        `{"success": false, "message": "yadoranソケットが見つかりません (${sock}/yadon-agent-yadoran.sock)", "data": null}\n`,
      );
      expect(viaAlias).toMatchObject({ code: 0, stdout: statusJson.stdout });
      expect(theme.code).toBe(1);
      expect(theme.stdout).toContain('pokemon');
      expect(await readdir(sock)).toEqual([]);
    },
    CLI_TEST_MS,
  );

  it(
    'runs a host daemon: status, _status, _send, say, bubbles, refusal of a second host, _restart and stop',
    async () => {
      const { sock, work } = await dirs();
      const other = await shortTempDir('ydo-');
      cleanups.push(other.cleanup);
      const env = yadonEnv(sock, { YADON_COUNT: '4', MUSUBI_STORE: `sqlite:${join(sock, 'bus.db')}` });
      const host = await yadon(['host', work], work, env);
      expect(host).toMatchObject({ code: 0 });
      expect(host.stdout).toMatch(/^ヤドン・エージェントホスト起動 \(pid \d+, /);
      const pid = Number((await readFile(join(sock, 'yadon-host.pid'), 'utf8')).trim());
      expect(isProcessAlive(pid)).toBe(true);
      expect((await lstat(join(sock, 'yadon-host.pid'))).mode & 0o777).toBe(0o600);

      const bubbles = startYadon(['bubbles', '--all'], work, env);
      // Status first: run beside `_send` it could catch the manager busy with that task.
      const [status, statusJson] = await Promise.all([
        yadon(['status'], work, env),
        yadon(['_status'], work, env),
      ]);
      const [send, say, second] = await Promise.all([
        yadon(['_send', 'write a.txt A', '--project-dir', work], work, env),
        yadon(['say', '1', 'こんにちは', '--type', 'hook'], work, env),
        yadon(['host', work], work, env),
      ]);
      expect(status).toMatchObject({
        code: 0,
        stdout:
          'ステータス確認中 (yadoran, yadon-1, yadon-2, yadon-3, yadon-4)... OK\n\nヤドラン:\n  状態: idle\n\nヤドン:\n  yadon-1: idle\n  yadon-2: idle\n  yadon-3: idle\n  yadon-4: idle\n',
      });
      expect(statusJson.stdout).toBe(
        '{"success": true, "message": "", "data": {"type": "status_response", "from": "yadoran", "state": "idle", "current_task": null, "workers": {"yadon-1": "idle", "yadon-2": "idle", "yadon-3": "idle", "yadon-4": "idle"}}}\n',
      );
      const envelope = JSON.parse(send.stdout) as {
        success: boolean;
        message: string;
        data: { id: string };
        task_id: string;
      };
      expect(envelope).toMatchObject({
        success: true,
        message: '',
        data: { type: 'result', status: 'success' },
      });
      expect(envelope.data.id).toBe(envelope.task_id);
      expect(await readFile(join(work, 'a.txt'), 'utf8')).toBe('A\n');
      expect(say).toMatchObject({ code: 0, stdout: '吹き出し送信中 (ヤドン1へ)... OK\n' });
      expect(second.code).toBe(1);
      expect(second.stderr).toBe(
        `エラー: ソケットが既に使用中です (${sock}/yadon-agent-yadoran.sock)\n別の yadon が稼働中です。先にそれを停止してください\n`,
      );
      expect(isProcessAlive(pid)).toBe(true);
      await waitFor(
        () => bubbles.stdout().includes('ヤドン1 (hook, 5000 ms): こんにちは'),
        20_000,
        'the bubble',
      );
      bubbles.child.kill('SIGINT');
      expect((await bubbles.exited).code).toBe(0);
      const result = await yadon(['_result', envelope.task_id], work, env);
      expect(JSON.parse(result.stdout)).toEqual({ success: true, message: '', data: envelope.data });

      const restart = await yadon(['_restart'], work, env);
      expect(restart).toMatchObject({ code: 0, stdout: '再起動が完了しました\n' });
      expect(isProcessAlive(pid)).toBe(false);
      const newPid = Number((await readFile(join(sock, 'yadon-host.pid'), 'utf8')).trim());
      expect(newPid).not.toBe(pid);
      expect(await ask(join(sock, 'yadon-agent-yadon-4.sock'), { type: 'status' })).toMatchObject({
        state: 'idle',
      });

      const foreign = createServer();
      await new Promise<void>((resolve) =>
        foreign.listen(join(other.dir, 'yadon-agent-yadoran.sock'), () => resolve()),
      );
      const stop = await yadon(['stop'], work, env);
      expect(stop).toMatchObject({ code: 0, stdout: '停止中...\n停止完了\n' });
      await waitFor(() => !isProcessAlive(newPid), 15_000, 'the host to exit');
      expect((await readdir(sock)).filter((n) => n.endsWith('.sock') || n.endsWith('.pid'))).toEqual([]);
      expect((await lstat(join(other.dir, 'yadon-agent-yadoran.sock'))).isSocket()).toBe(true);
      foreign.close();
    },
    CLI_TEST_MS,
  );

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
      const env = yadonEnv(sock, {
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
      const env = yadonEnv(sock, {
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
      expect(gemini.argv).toEqual(expect.arrayContaining(['gemini-3.0-flash', '--yolo']));
      expect(gemini.stdin).toContain('タスク:\ntask for 2');
      expect(await yadon(['stop'], work, env)).toMatchObject({ code: 0 });
    },
    CLI_TEST_MS,
  );
});
