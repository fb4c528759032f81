import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IGNITE_FIXTURES, maskVolatile, runTool, tempDir } from '../../../test/fixtures/ignite-tool-io.js';
import { runMimeTool } from './mime-tool.js';

const fixture = (name: string): Promise<string> => readFile(join(IGNITE_FIXTURES, name), 'utf8');
const BODY = 'task_id: "task_001"\ntitle: "README作成"\n';
const F2_ARGS = [
  'build',
  '--from',
  'coordinator',
  '--to',
  'ignitian_1',
  'ignitian_2',
  '--cc',
  'leader',
  'evaluator',
  '--type',
  'task_assignment',
  '--priority',
  'high',
  '--thread-id',
  'th-1',
  '--in-reply-to',
  '<179597535379.7769.9037877151245167330@ignite.local>',
  '--repo',
  'owner/repo',
  '--issue',
  '42',
  '--status',
  'queued',
  '--body-file',
  'body.yaml',
  '-o',
  'f2.mime',
];

describe('ignite mime tool', () => {
  let dir = '';
  let cleanup: () => Promise<void> = () => Promise.resolve();
  const savedTz = process.env['TZ'];
  const mime = (argv: readonly string[], input?: string | Uint8Array) =>
    runTool(runMimeTool, argv, { cwd: dir, ...(input !== undefined && { input }) });
  const build = async (...extra: string[]) =>
    (await mime(['build', '--from', 'a', '--to', 'b', '--type', 't', ...extra])).stdout;

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    process.env['TZ'] = 'Asia/Tokyo';
    await writeFile(join(dir, 'body.yaml'), BODY);
  });
  afterEach(async () => {
    if (savedTz === undefined) delete process.env['TZ'];
    else process.env['TZ'] = savedTz;
    await cleanup();
  });

  it('reproduces F1 byte for byte except Message-ID and Date (1, 3)', async () => {
    const run = await mime([
      'build',
      '--from',
      'strategist',
      '--to',
      'coordinator',
      '--type',
      'task_list',
      '--body',
      'hello: world',
    ]);
    expect(run.code).toBe(0);
    expect(maskVolatile(run.stdout)).toBe(maskVolatile(await fixture('F1-build-minimal.mime')));
    expect(run.stdout.endsWith('hello: world')).toBe(true);
  });

  it('reproduces F2 with every option and writes the file with mode 0600 (2, 15)', async () => {
    const run = await mime(F2_ARGS);
    expect(run).toEqual({ code: 0, stdout: '', stderr: '' });
    const written = await readFile(join(dir, 'f2.mime'), 'utf8');
    expect(maskVolatile(written)).toBe(maskVolatile(await fixture('F2-build-all-options.mime')));
    expect((await stat(join(dir, 'f2.mime'))).mode & 0o777).toBe(0o600);
  });

  it('ends an empty body with 8bit and a blank line, and writes To with a trailing space for --to "" (3, 4)', async () => {
    expect((await build()).endsWith('Content-Transfer-Encoding: 8bit\n\n')).toBe(true);
    const run = await mime(['build', '--from', 'a', '--to', '', '--type', 't']);
    expect(run.stdout).toContain('\nTo: \n');
  });

  it('omits Cc without values and empty optional headers (5, 6)', async () => {
    const text = await build('--cc', '--thread-id', '', '--repo', '', '--issue', '', '--status', '');
    expect(text).not.toMatch(/^(Cc|X-IGNITE-Thread-ID|X-IGNITE-Repository|X-IGNITE-Issue|X-IGNITE-Status):/m);
    expect(await build('--priority', '')).toContain('\nX-IGNITE-Priority: \n');
  });

  it('writes a Message-ID with the current centiseconds and the writer pid (7)', async () => {
    const before = Math.floor(Date.now() / 10);
    const id = /^Message-ID: (.*)$/m.exec(await build())?.[1] ?? '';
    expect(id).toMatch(/^<\d+\.\d+\.\d+@ignite\.local>$/);
    const [centis, pid] = id.slice(1).split('.').map(Number);
    expect(centis).toBeGreaterThanOrEqual(before);
    expect(centis).toBeLessThanOrEqual(Math.floor(Date.now() / 10));
    expect(pid).toBe(4242);
  });

  it('writes the Date in the local time zone (8)', async () => {
    expect(/^Date: (.*)$/m.exec(await build())?.[1]).toMatch(
      /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} \+0900$/,
    );
    process.env['TZ'] = 'UTC';
    expect(/^Date: (.*)$/m.exec(await build())?.[1]).toMatch(/\+0000$/);
  });

  it('never folds a long value and writes raw UTF-8 (9, 10)', async () => {
    const repo = 'o'.repeat(100) + '/' + 'r'.repeat(99);
    expect(await build('--repo', repo)).toContain(`\nX-IGNITE-Repository: ${repo}\n`);
    const run = await mime(['build', '--from', '日本', '--to', 'b', '--type', 't']);
    expect(run.stdout).toContain('\nFrom: 日本\n');
  });

  it('rejects header injection with exit 2 and writes no file (11, 76)', async () => {
    const run = await mime(['build', '--from', 'a\nX-Evil: 1', '--to', 'b', '--type', 't', '-o', 'x.mime']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'ignite_mime build: error: argument --from: value must not contain line breaks',
    );
    await expect(stat(join(dir, 'x.mime'))).rejects.toThrow();
    for (const bad of ['a\rb', 'a\u2028b', 'a\u0085b', 'a\u000bb', 'a\u001eb']) {
      expect((await mime(['build', '--from', 'a', '--to', 'b', '--type', 't', '--repo', bad])).code).toBe(2);
    }
    expect((await mime(['build', '--from', 'a', '--to', 'ok', 'b\nc', '--type', 't'])).stderr).toContain(
      'argument --to: value must not',
    );
    expect((await mime(['update-header', 'f', 'X-A', 'v\u2029'])).stderr).toContain(
      'argument value: value must not contain line breaks',
    );
  });

  it('converts CRLF in a body file, reads stdin for -, and lets --body-file win (12, 13)', async () => {
    await writeFile(join(dir, 'crlf.yaml'), 'a: 1\r\nb: 2\rc: 3\r\n');
    expect(await build('--body-file', 'crlf.yaml')).toMatch(/\n\na: 1\nb: 2\nc: 3\n$/);
    const stdin = await mime(
      ['build', '--from', 'a', '--to', 'b', '--type', 't', '--body-file', '-'],
      'x: 1\r\n',
    );
    expect(stdin.stdout.endsWith('\n\nx: 1\n')).toBe(true);
    expect(await build('--body', 'inline', '--body-file', 'body.yaml')).toMatch(/\n\ntask_id/);
  });

  it('exits 1 for a body file that is not UTF-8 (14)', async () => {
    await writeFile(join(dir, 'bad.yaml'), Buffer.from([0x61, 0xff, 0x62]));
    const run = await mime(['build', '--from', 'a', '--to', 'b', '--type', 't', '--body-file', 'bad.yaml']);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 1: invalid start byte\n",
    );
  });

  it('replaces an existing -o target atomically, leaving no temp file (16)', async () => {
    await writeFile(join(dir, 'out.mime'), 'old');
    await chmod(join(dir, 'out.mime'), 0o644);
    expect((await mime(['build', '--from', 'a', '--to', 'b', '--type', 't', '-o', 'out.mime'])).code).toBe(0);
    expect(await readFile(join(dir, 'out.mime'), 'utf8')).toContain('From: a');
    expect((await stat(join(dir, 'out.mime'))).mode & 0o777).toBe(0o600);
    const { readdir } = await import('node:fs/promises');
    expect((await readdir(dir)).filter((n) => n.startsWith('.'))).toEqual([]);
  });

  it('accepts unique option prefixes and rejects ambiguous ones (17)', async () => {
    const run = await mime([
      'build',
      '--fr',
      'a',
      '--to',
      'b',
      '--ty',
      't',
      '--pri',
      'high',
      '--body-f',
      'body.yaml',
    ]);
    expect(run.stdout).toContain('\nX-IGNITE-Priority: high\n');
    expect(run.stdout).toContain('\n\ntask_id');
    expect((await mime(['build', '--from', 'a', '--to', 'b', '--type', 't', '--bo', 'x'])).stderr).toContain(
      'ambiguous option: --bo could match --body, --body-file',
    );
    expect((await mime(['build', '--from=a', '--to', 'b', '--type=t'])).stdout).toContain('\nFrom: a\n');
  });

  it('parses F4 into F5 and the CRLF file F6 into F6-parse.json exactly (18, 19)', async () => {
    expect((await mime(['parse', join(IGNITE_FIXTURES, 'F4-retry-headers.mime')])).stdout).toBe(
      await fixture('F5-parse-of-F4.json'),
    );
    expect((await mime(['parse', join(IGNITE_FIXTURES, 'F6-crlf-input.mime')])).stdout).toBe(
      await fixture('F6-parse.json'),
    );
  });

  it('parses an empty file to defaults and keeps a present-but-empty priority (20, 21, 22)', async () => {
    await writeFile(join(dir, 'empty.mime'), '');
    const empty = JSON.parse((await mime(['parse', 'empty.mime'])).stdout) as Record<string, unknown>;
    expect(empty).toEqual({
      message_id: '',
      from: '',
      to: [],
      cc: [],
      date: '',
      in_reply_to: '',
      type: '',
      priority: 'normal',
      thread_id: '',
      repository: '',
      issue: '',
      status: '',
      content_type: '',
      body: '',
    });
    await writeFile(join(dir, 'p.mime'), 'X-IGNITE-Priority:\nX-IGNITE-Issue: 7\n\n');
    const parsed = JSON.parse((await mime(['parse', 'p.mime'])).stdout) as Record<string, unknown>;
    expect(parsed['priority']).toBe('');
    expect(parsed['issue']).toBe('7');
  });

  it('joins folded lines, keeps the last duplicate, is case-sensitive and never overrides parsed fields (23-28)', async () => {
    const text = [
      'From: a',
      'To: b,',
      '  c',
      'to: ignored',
      'X-IGNITE-Body: evil',
      'X-IGNITE-From: evil',
      'X-IGNITE-Zeta: 1',
      'Subject: hidden',
      'X-IGNITE-Alpha-Beta: 2',
      'From: z',
      'X-IGNITE-type: evil',
      '',
      'real body',
    ].join('\n');
    await writeFile(join(dir, 'm.mime'), text);
    const out = (await mime(['parse', 'm.mime'])).stdout;
    const parsed = JSON.parse(out) as Record<string, unknown>;
    expect(parsed['from']).toBe('z');
    expect(parsed['to']).toEqual(['b', 'c']);
    expect(parsed['body']).toBe('real body');
    expect(parsed['type']).toBe('');
    expect(Object.keys(parsed).slice(14)).toEqual(['zeta', 'alpha_beta']);
    expect(out).not.toContain('Subject');
    expect(out).not.toContain('evil');
  });

  it('extract-body prints the body exactly, and nothing for a file without a blank line (29)', async () => {
    const run = await mime(['extract-body', join(IGNITE_FIXTURES, 'F4-retry-headers.mime')]);
    expect(Buffer.byteLength(run.stdout)).toBe(42);
    expect(run.stdout).toBe(BODY);
    await writeFile(join(dir, 'nobody.mime'), 'From: a\nTo: b\n');
    expect(await mime(['extract-body', 'nobody.mime'])).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('turns F2 into F3 and F3 into F4 with the retry edit (30, 34)', async () => {
    await writeFile(join(dir, 'f.mime'), await fixture('F2-build-all-options.mime'));
    await mime(['update-status', 'f.mime', 'processing', '--processed-at', '2026-11-30T03:15:31+09:00']);
    expect(await readFile(join(dir, 'f.mime'), 'utf8')).toBe(
      await fixture('F3-update-status-processing.mime'),
    );
    await mime(['remove-header', 'f.mime', 'X-IGNITE-Error-Reason']);
    await mime([
      'update-status',
      'f.mime',
      'retrying',
      '--extra',
      'X-IGNITE-Retry-Count=1',
      'X-IGNITE-Last-Retry-At=2026-11-30T03:15:31+09:00',
      'X-IGNITE-Next-Retry-After=2026-11-30T03:15:35+09:00',
    ]);
    expect(await readFile(join(dir, 'f.mime'), 'utf8')).toBe(await fixture('F4-retry-headers.mime'));
  });

  it('appends a missing status, replaces every status line and writes K: for --extra K (31, 32, 33)', async () => {
    await writeFile(join(dir, 'a.mime'), 'From: a\nContent-Transfer-Encoding: 8bit\n\nbody');
    await mime(['update-status', 'a.mime', 'queued', '--extra', 'X-K', 'X-V=1', 'X-V=2']);
    expect(await readFile(join(dir, 'a.mime'), 'utf8')).toBe(
      'From: a\nContent-Transfer-Encoding: 8bit\nX-IGNITE-Status: queued\nX-K: \nX-V: 2\n\nbody',
    );
    await writeFile(join(dir, 'b.mime'), 'X-IGNITE-Status: a\nFrom: x\nX-IGNITE-Status: b\n\n');
    await mime(['update-status', 'b.mime', 'done']);
    expect(await readFile(join(dir, 'b.mime'), 'utf8')).toBe(
      'X-IGNITE-Status: done\nFrom: x\nX-IGNITE-Status: done\n\n',
    );
  });

  it('update-header replaces the first match, remove-header removes all (35)', async () => {
    await writeFile(join(dir, 'h.mime'), 'X-A: 1\nX-A: 2\nX-B: 3\n  cont\n\nbody');
    await mime(['update-header', 'h.mime', 'X-A', 'new']);
    expect(await readFile(join(dir, 'h.mime'), 'utf8')).toBe('X-A: new\nX-A: 2\nX-B: 3\n  cont\n\nbody');
    await mime(['remove-header', 'h.mime', 'X-A']);
    expect(await readFile(join(dir, 'h.mime'), 'utf8')).toBe('X-B: 3\n  cont\n\nbody');
    expect((await mime(['remove-header', 'h.mime', 'X-None'])).code).toBe(0);
    expect(await readFile(join(dir, 'h.mime'), 'utf8')).toBe('X-B: 3\n  cont\n\nbody');
  });

  it('rewrites a CRLF file with LF only and mode 0600 (36)', async () => {
    await writeFile(join(dir, 'c.mime'), 'From: a\r\nTo: b\r\n\r\nx\r\n', { mode: 0o644 });
    await mime(['update-status', 'c.mime', 's']);
    expect(await readFile(join(dir, 'c.mime'), 'utf8')).toBe('From: a\nTo: b\nX-IGNITE-Status: s\n\nx\n');
    expect((await stat(join(dir, 'c.mime'))).mode & 0o777).toBe(0o600);
  });

  it('exits 2 with argparse texts for a missing or unknown subcommand and missing arguments (37-39)', async () => {
    expect(await mime([])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('ignite_mime: error: the following arguments are required: command\n'),
    });
    const foo = await mime(['foo']);
    expect(foo.code).toBe(2);
    expect(foo.stderr).toContain(
      "ignite_mime: error: argument command: invalid choice: 'foo' (choose from 'build', 'parse', 'extract-body', 'update-status', 'update-header', 'remove-header')\n",
    );
    const missing = await mime(['build', '--from', 'a']);
    expect(missing).toMatchObject({
      code: 2,
      stderr: expect.stringContaining(
        'ignite_mime build: error: the following arguments are required: --to, --type\n',
      ),
    });
    expect((await mime(['update-status', 'f'])).stderr).toContain(
      'ignite_mime update-status: error: the following arguments are required: status\n',
    );
    expect((await mime(['parse'])).stderr).toContain('the following arguments are required: file');
  });

  it('exits 1 with a one-line message for a missing file (40)', async () => {
    expect(await mime(['parse', '/nonexistent'])).toEqual({
      code: 1,
      stdout: '',
      stderr: "FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent'\n",
    });
  });
});
