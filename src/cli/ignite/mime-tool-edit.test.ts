import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BODY, fixture, mimeToolSession } from '../../../test/fixtures/ignite-mime-session.js';
import { IGNITE_FIXTURES } from '../../../test/fixtures/ignite-tool-io.js';

// parse, extract-body, update-status, update-header, remove-header and the usage errors; build is in
// mime-tool.test.ts.

describe('ignite mime tool: parse, edits and usage errors', () => {
  let dir = '';
  const session = mimeToolSession();
  const { mime } = session;

  beforeEach(async () => {
    dir = await session.open();
  });
  afterEach(() => session.close());

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

  it('reads an indented line after a header with an empty name as a line of its own, as the original does (#35)', async () => {
    const parse = async (text: string): Promise<Record<string, unknown>> => {
      await writeFile(join(dir, 'e.mime'), text);
      return JSON.parse((await mime(['parse', 'e.mime'])).stdout) as Record<string, unknown>;
    };
    // `update-status --extra "==="` writes the line `: ==`: a header named "".
    expect((await parse('From: a\nTo: b\n: x\n From: evil\n\nbody\n'))['from']).toBe('evil');
    // An indented first line starts a header too, and an indented header takes continuations of its own;
    // an empty name never does, indented or not.
    expect(await parse(' : x\n From: e\n  vil\n:\n\tX-IGNITE-Zeta: 1\n')).toMatchObject({
      from: 'e vil',
      zeta: '1',
    });
    // An indented line without `:` after the empty name is ignored, not appended anywhere.
    expect(await parse('To: b\n: x\n  c, d\n X-IGNITE-Type: t\n')).toMatchObject({ to: ['b'], type: 't' });
    // After a named header the same lines still continue it.
    expect(await parse('To: b\n From: evil\n')).toMatchObject({ from: '', to: ['b From: evil'] });
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

  it('uses a value that is exactly `--` where Python 3.11 argparse leaves an empty list (docs/ignite.md)', async () => {
    await writeFile(join(dir, 'f.mime'), 'From: a\n\nx');
    expect(await mime(['update-status', 'f.mime', '--', '--'])).toMatchObject({ code: 0, stderr: '' });
    expect(await readFile(join(dir, 'f.mime'), 'utf8')).toBe('From: a\nX-IGNITE-Status: --\n\nx');
    expect(await session.build('--body=--', '--from=--')).toMatch(/\nFrom: --\n[^]*\n\n--$/);
  });

  it('wraps the usage of an error at COLUMNS as argparse does, 80 columns by default', async () => {
    const { stderr } = await mime(['build']);
    expect(stderr.split('\n').slice(0, 2)).toEqual([
      'usage: ignite_mime build [-h] --from FROM --to TO [TO ...] --type TYPE',
      '                         [--cc [CC ...]] [--priority PRIORITY]',
    ]);
    expect(stderr).toMatch(
      /\nignite_mime build: error: the following arguments are required: --from, --to, --type\n$/,
    );
  });

  it('exits 1 with a one-line message for a missing file (40)', async () => {
    expect(await mime(['parse', '/nonexistent'])).toEqual({
      code: 1,
      stdout: '',
      stderr: "FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent'\n",
    });
  });
});
