import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/fixtures/ignite-tool-io.js';
import { bodyField } from '../../agents/scripted/ignite-org-rules.js';
import { isMusubiError } from '../../core/errors.js';
import { BodyFields } from '../../gateways/ignite/body-fields.js';
import { IgnitePaths } from '../../gateways/ignite/ignite-paths.js';
import { parseMime } from '../../gateways/ignite/mime/mime-parse.js';
import { writeNotification, writePlan, writeWorkOn } from './producers.js';

/** The written message: its folder's agent, file name, the headers and the body bytes. */
async function written(path: string): Promise<{
  agent: string;
  name: string;
  headers: ReadonlyMap<string, string>;
  body: string;
}> {
  const text = await readFile(path, 'utf8');
  const { headers, body } = parseMime(text);
  expect(text.slice(text.indexOf('\n\n') + 2)).toBe(body);
  return { agent: basename(dirname(path)), name: basename(path), headers, body };
}

describe('ignite producers (plan, notify, work-on)', () => {
  let paths: IgnitePaths;
  let cleanup: () => Promise<void> = () => Promise.resolve();
  beforeEach(async () => {
    const t = await tempDir();
    cleanup = t.cleanup;
    paths = new IgnitePaths(t.dir);
  });
  afterEach(() => cleanup());

  it('writes a one-line goal as the original does: `goal: "…"` flat, no trailing newline', async () => {
    const m = await written(await writePlan(paths, 'READMEファイルを作成する'));
    expect(m.agent).toBe('leader');
    expect(m.name).toMatch(/^user_goal_\d{16}\.mime$/);
    expect(m.headers.get('From')).toBe('user');
    expect(m.headers.get('To')).toBe('leader');
    expect(m.headers.get('X-IGNITE-Type')).toBe('user_goal');
    expect(m.headers.get('X-IGNITE-Priority')).toBe('high');
    expect(m.body).toBe('goal: "READMEファイルを作成する"');
  });

  it('puts a backslash before every double quote and adds `context: "…"` with -c', async () => {
    const m = await written(await writePlan(paths, 'say "hi" to 認証', 'JWT "auth", セッション'));
    expect(m.body).toBe('goal: "say \\"hi\\" to 認証"\ncontext: "JWT \\"auth\\", セッション"');
    expect(bodyField(m.body, 'goal')).toBe('say "hi" to 認証');
    expect(new BodyFields(m.body).get('context')).toBe('JWT "auth", セッション');
    expect((await written(await writePlan(paths, 'g', ''))).body).toBe('goal: "g"');
  });

  it('doubles a backslash, which the original left alone and YAML then read as an escape', async () => {
    const goal = 'copy C:\\temp\\new to \\"x\\"';
    const m = await written(await writePlan(paths, goal));
    expect(m.body).toBe('goal: "copy C:\\\\temp\\\\new to \\\\\\"x\\\\\\""');
    expect(bodyField(m.body, 'goal')).toBe(goal);
    expect(new BodyFields(m.body).get('goal')).toBe(goal);
  });

  it('keeps the line breaks of a multi-line goal in a top-level block scalar', async () => {
    const goal = 'Build the demo:\n- write out/a.txt alpha\n\n- write out/b.txt "beta"';
    const m = await written(await writePlan(paths, goal, 'e2e'));
    expect(m.body).toBe(
      'goal: |\n  Build the demo:\n  - write out/a.txt alpha\n  \n  - write out/b.txt "beta"\ncontext: "e2e"',
    );
    expect(bodyField(m.body, 'goal')).toBe(`${goal}\n`);
    expect(new BodyFields(m.body).get('goal')).toBe(`${goal}\n`);
    expect(new BodyFields(m.body).get('context')).toBe('e2e');
  });

  it('marks the indentation of a block whose first line starts with a space, and turns CR into LF', async () => {
    const m = await written(await writePlan(paths, '  indented\r\nnext\rlast\n', 'two\nlines'));
    expect(m.body).toBe('goal: |2\n    indented\n  next\n  last\ncontext: |\n  two\n  lines');
    expect(bodyField(m.body, 'goal')).toBe('  indented\nnext\nlast\n');
    expect(bodyField(m.body, 'context')).toBe('two\nlines\n');
  });

  it('refuses an empty goal or message, as the original does', async () => {
    await expect(writePlan(paths, '')).rejects.toSatisfy((e) => isMusubiError(e, 'USAGE_INVALID'));
    await expect(writeNotification(paths, 'leader', '')).rejects.toSatisfy((e) =>
      isMusubiError(e, 'USAGE_INVALID'),
    );
  });

  it('writes a notification as `message: |` with every line indented, no trailing newline', async () => {
    const m = await written(await writeNotification(paths, 'ignitian-1', 'hello'));
    expect(m.agent).toBe('ignitian_1');
    expect(m.name).toMatch(/^notify_\d{16}\.mime$/);
    expect(m.headers.get('From')).toBe('user');
    expect(m.headers.get('To')).toBe('ignitian_1');
    expect(m.headers.get('X-IGNITE-Type')).toBe('notification');
    expect(m.headers.get('X-IGNITE-Priority')).toBe('normal');
    expect(m.body).toBe('message: |\n  hello');
    const multi = await written(await writeNotification(paths, 'leader', 'a "q"\n\n  b\n'));
    expect(multi.body).toBe('message: |\n  a "q"\n  \n    b');
    expect(new BodyFields(multi.body).get('message')).toBe('a "q"\n\n  b\n');
  });

  it('writes a github_task with the original fields it can know without asking GitHub', async () => {
    const m = await written(await writeWorkOn(paths, 'https://github.com/owner/repo/issues/42'));
    expect(m.agent).toBe('leader');
    expect(m.name).toMatch(/^github_task_\d{16}\.mime$/);
    expect(m.headers.get('X-IGNITE-Type')).toBe('github_task');
    expect(m.headers.get('X-IGNITE-Priority')).toBe('high');
    expect(m.headers.get('X-IGNITE-Repository')).toBe('owner/repo');
    expect(m.headers.get('X-IGNITE-Issue')).toBe('42');
    expect(m.body).toBe(
      [
        'trigger: auto',
        'repository: owner/repo',
        'issue_number: 42',
        'requested_by: user',
        'trigger_comment: "work-onコマンドによる手動トリガー"',
        'branch_prefix: "ignite/"',
        'url: "https://github.com/owner/repo/issues/42"',
      ].join('\n'),
    );
    const byNumber = await written(await writeWorkOn(paths, '7', 'o/r'));
    expect(byNumber.body).toContain('repository: o/r\nissue_number: 7\n');
    expect(byNumber.body.endsWith('url: "https://github.com/o/r/issues/7"')).toBe(true);
    expect(new BodyFields(byNumber.body).get('issue_number')).toBe('7');
  });
});
