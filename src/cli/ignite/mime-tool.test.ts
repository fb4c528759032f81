import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fixture, mimeToolSession } from '../../../test/fixtures/ignite-mime-session.js';
import { maskVolatile } from '../../../test/fixtures/ignite-tool-io.js';

// The build subcommand; parse, extract-body, the edits and the usage errors are in mime-tool-edit.test.ts.

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
  const session = mimeToolSession();
  const { mime, build } = session;

  beforeEach(async () => {
    dir = await session.open();
  });
  afterEach(() => session.close());

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

  it('takes `--opt=value` whose value has a space or starts with a dash, as argparse does (#16)', async () => {
    const run = await mime(['build', '--from', 'a', '--to', 'b', '--type', 't', '--body=hello world']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(run.stdout.endsWith('\n\nhello world')).toBe(true);
    expect(await build('--body=-x y', '--pri= high ')).toMatch(
      /\nX-IGNITE-Priority: {2}high \n[^]*\n\n-x y$/,
    );
    expect(await build('-o x', '--body', 'b')).toBe('');
  });
});
