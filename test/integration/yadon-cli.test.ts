import { lstat, readFile, readdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../src/agents/process/process-group.js';
import { waitFor } from '../fakes/fake-cli-harness.js';
import type { CliRun } from '../fixtures/run-cli.js';
import {
  CLI_TEST_MS,
  RED,
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
    'starts the host daemon in a socket folder that does not exist yet, creating it 0700',
    async () => {
      const { sock, work } = await dirs();
      const fresh = join(sock, 'new');
      const env = yadonEnv(fresh, { YADON_COUNT: '1', MUSUBI_STORE: 'memory:' });
      expect(await yadon(['host', work], work, env)).toMatchObject({ code: 0 });
      expect((await lstat(fresh)).mode & 0o777).toBe(0o700);
      const pid = Number((await readFile(join(fresh, 'yadon-host.pid'), 'utf8')).trim());
      expect(await yadon(['stop'], work, env)).toMatchObject({ code: 0 });
      await waitFor(() => !isProcessAlive(pid), 15_000, 'the host to exit');
    },
    CLI_TEST_MS,
  );
});
