import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IGNITE_FIXTURES, maskVolatile, runTool, tempDir } from '../../../test/fixtures/ignite-tool-io.js';
import { runSendTool, sendHelp } from './send-tool.js';

const fixture = (name: string): Promise<string> => readFile(join(IGNITE_FIXTURES, name), 'utf8');
const BODY = 'task_id: "task_001"\ntitle: "README作成"\ndescription: "READMEを作成する"\n';

describe('ignite send tool', () => {
  let dir = '';
  let cleanup: () => Promise<void> = () => Promise.resolve();
  const savedTz = process.env['TZ'];
  const send = (
    argv: readonly string[],
    options: { env?: Record<string, string>; input?: string; tool?: string } = {},
  ) =>
    runTool((io) => runSendTool(io, options.tool), argv, {
      cwd: dir,
      env: options.env ?? {},
      ...(options.input !== undefined && { input: options.input }),
    });
  const queued = async (agent: string): Promise<string[]> =>
    readdir(join(dir, '.ignite', 'queue', agent)).catch(() => []);

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    process.env['TZ'] = 'Asia/Tokyo';
    await mkdir(join(dir, '.ignite'));
    await writeFile(join(dir, 'body.yaml'), BODY);
  });
  afterEach(async () => {
    if (savedTz === undefined) delete process.env['TZ'];
    else process.env['TZ'] = savedTz;
    await cleanup();
  });

  it('prints the help on stdout and exits 1 with fewer than 3 arguments (41)', async () => {
    expect(await send(['a', 'b'])).toEqual({ code: 1, stdout: sendHelp('musubi ignite send'), stderr: '' });
    expect((await send(['a', 'b'], { tool: 'send_message.sh' })).stdout).toContain(
      '  send_message.sh <type> <from> <to> [options]',
    );
    expect(await send(['t', 'a', 'leader', '--help'])).toMatchObject({
      code: 0,
      stdout: sendHelp('musubi ignite send'),
    });
  });

  it('refuses an invalid recipient with the spec text and creates nothing (42)', async () => {
    const run = await send(['task', 'strategist', 'quality_plan_response', '--body', 'x']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "❌ エラー: 不正な宛先エージェント名: 'quality_plan_response'\n" +
        '  有効な宛先: leader strategist architect evaluator coordinator innovator, ignitian_N\n' +
        '  ヒント: musubi ignite send <type> <from> <to> の第3引数はエージェント名です\n',
    );
    expect(await readdir(join(dir, '.ignite'))).toEqual([]);
    for (const bad of ['ignitian_', 'ignitian_x', 'Leader', 'ignitian_1/..', '../leader'])
      expect((await send(['t', 'a', bad])).code).toBe(1);
  });

  it('accepts ignitian_12 and ignitian-3 (43)', async () => {
    expect((await send(['t', 'a', 'ignitian_12'])).code).toBe(0);
    expect((await send(['t', 'a', 'ignitian-3'])).code).toBe(0);
    expect(await queued('ignitian-3')).toHaveLength(1);
  });

  it('reproduces F7 with the options form and prints the path (44, 46)', async () => {
    const run = await send(
      [
        'task_assignment',
        'coordinator',
        'ignitian_1',
        '--body-file',
        'body.yaml',
        '--priority',
        'high',
        '--repo',
        'owner/repo',
        '--issue',
        '42',
      ],
      {
        env: { WORKSPACE_DIR: dir },
      },
    );
    expect(run.code).toBe(0);
    const [name = ''] = await queued('ignitian_1');
    expect(name).toMatch(/^task_assignment_[0-9]{16}\.mime$/);
    expect(run.stdout).toBe(`✓ メッセージを送信しました: ${dir}/.ignite/queue/ignitian_1/${name}\n`);
    const written = await readFile(join(dir, '.ignite', 'queue', 'ignitian_1', name), 'utf8');
    expect(maskVolatile(written)).toBe(maskVolatile(await fixture('F7-send-options.mime')));
  });

  it('reproduces F8 with the legacy form, no trailing newline, path starting ./.ignite/ (45, 46)', async () => {
    const run = await send([
      'task_completed',
      'ignitian_1',
      'coordinator',
      'task_id: "task_001"',
      'high',
      'ignored',
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^✓ メッセージを送信しました: \.\/\.ignite\/queue\/coordinator\/task_completed_[0-9]{16}\.mime\n$/,
    );
    const [name = ''] = await queued('coordinator');
    const written = await readFile(join(dir, '.ignite', 'queue', 'coordinator', name), 'utf8');
    expect(maskVolatile(written)).toBe(maskVolatile(await fixture('F8-send-legacy.mime')));
  });

  it('exits 1 without .ignite/ and IGNITE_RUNTIME_DIR, and uses IGNITE_RUNTIME_DIR otherwise (47)', async () => {
    const other = join(dir, 'elsewhere');
    await mkdir(other);
    const run = await send(['t', 'a', 'leader'], { env: { WORKSPACE_DIR: other } });
    expect(run).toMatchObject({
      code: 1,
      stderr: '❌ エラー: .ignite/ ディレクトリが見つかりません。ignite init を実行してください\n',
    });
    const rt = join(dir, 'rt');
    const ok = await send(['t', 'a', 'leader'], { env: { WORKSPACE_DIR: other, IGNITE_RUNTIME_DIR: rt } });
    expect(ok.stdout).toContain(`${rt}/queue/leader/t_`);
  });

  it('warns about --body, reads --body-file - from stdin, converts CRLF in inline bodies (48)', async () => {
    const run = await send(['t', 'a', 'leader', '--body', 'x: 1\r\ny: 2']);
    expect(run.stderr).toBe(
      '警告: --body はエスケープ問題が発生しやすいため --body-file の使用を推奨します\n',
    );
    const stdin = await send(['u', 'a', 'leader', '--body-file', '-'], { input: 'z: 3\r\n' });
    expect(stdin.code).toBe(0);
    const files = await queued('leader');
    const texts = await Promise.all(
      files.map((f) => readFile(join(dir, '.ignite', 'queue', 'leader', f), 'utf8')),
    );
    expect(texts.some((t) => t.endsWith('\n\nx: 1\ny: 2'))).toBe(true);
    expect(texts.some((t) => t.endsWith('\n\nz: 3\n'))).toBe(true);
  });

  it('rejects unknown options and options without a value (49, 16)', async () => {
    const unknown = await send(['t', 'a', 'leader', '--x']);
    expect(unknown).toEqual({
      code: 1,
      stdout: sendHelp('musubi ignite send'),
      stderr: '❌ エラー: 不明なオプション: --x\n',
    });
    expect(await send(['t', 'a', 'leader', '--priority'])).toEqual({
      code: 1,
      stdout: '',
      stderr: '❌ エラー: オプションに値がありません: --priority\n',
    });
    // The original is a shell `case` over whole arguments, not argparse: no `--opt=value`, no prefixes.
    for (const opt of ['--body=hello world', '--pri']) {
      expect((await send(['t', 'a', 'leader', opt, 'x'])).stderr).toBe(
        `❌ エラー: 不明なオプション: ${opt}\n`,
      );
    }
  });

  it('refuses types with /, NUL or a leading dot (50)', async () => {
    for (const type of ['../x', 'a/b', '.hidden', 'a\0b']) {
      expect(await send([type, 'a', 'leader'])).toMatchObject({
        code: 1,
        stderr: `❌ エラー: 不正なメッセージタイプ: '${type}'\n`,
      });
    }
    expect(await readdir(join(dir, '.ignite'))).toEqual([]);
  });

  it('refuses a from with a line break as a build failure and never overwrites a same-microsecond file', async () => {
    const bad = await send(['t', 'a\nX-Evil: 1', 'leader']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('❌ エラー: MIMEメッセージの生成に失敗しました');
    const fixed = { env: {}, nowMs: 1795975394355.402 };
    for (let i = 0; i < 3; i++) {
      await runTool((io) => runSendTool(io), ['t', 'a', 'leader', `n: ${i}`], { cwd: dir, ...fixed });
    }
    expect((await queued('leader')).sort()).toEqual([
      't_1795975394355402.mime',
      't_1795975394355403.mime',
      't_1795975394355404.mime',
    ]);
  });
});
