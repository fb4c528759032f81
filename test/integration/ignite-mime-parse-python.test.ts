import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMimeTool } from '../../src/cli/ignite/mime-tool.js';
import { prng } from '../fixtures/ignite-argv-cases.js';
import { runTool } from '../fixtures/ignite-tool-io.js';
import { expectNoLiveChildren } from '../fixtures/process-children.js';

// `ignite mime parse` against the original's parse stated in Python (test/fixtures/ignite-mime-parse.py):
// Python reads each file as the original does (strict UTF-8, universal newlines) and cuts its header block
// with its own splitlines, strip, partition and str truth, in one python3 process for every file; musubi
// runs the tool in-process on the same bytes. The outputs must be the same text, and a file that is not
// UTF-8 must be refused by both (exit 1 in musubi, null from Python).

const FIXTURE = join(import.meta.dirname, '../fixtures/ignite-mime-parse.py');
const GENERATED = 3000;

/** A python3 to compare with, or why there is none (a failure in CI, a printed skip elsewhere). */
function findPython(): { python: string } | { reason: string } {
  const run = spawnSync('python3', ['--version'], { encoding: 'utf8' });
  if (run.status === 0) return { python: 'python3' };
  const reason = 'no python3 on PATH (the str rules this test compares with)';
  if (process.env['CI'] === 'true')
    throw new Error(`ignite mime parse differential test cannot run: ${reason}`);
  console.warn(`SKIP ignite mime parse differential test: ${reason}`);
  return { reason };
}

function runPython(python: string, files: readonly Buffer[]): Array<string | null> {
  const run = spawnSync(python, [FIXTURE], {
    input: JSON.stringify(files.map((f) => f.toString('base64'))),
    encoding: 'utf8',
    env: { ...process.env, PYTHONUTF8: '1', PYTHONIOENCODING: 'utf-8' },
    maxBuffer: 256 * 1024 * 1024,
    timeout: 60_000,
  });
  if (run.status !== 0) throw new Error(`${python} ${FIXTURE} failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as Array<string | null>;
}

async function runMusubi(file: Buffer): Promise<string | null> {
  const run = await runTool(runMimeTool, ['parse', '-'], { cwd: tmpdir(), input: file });
  if (run.code === 1) return null;
  if (run.code !== 0) throw new Error(`parse exited ${run.code}: ${run.stderr}`);
  return run.stdout;
}

/** Files met by hand, kept so they are always checked; the first is the #35 item 7 report. */
const FIXED_FILES: readonly string[] = [
  'From: a\nTo: b\n: x\n From: evil\n\nbody\n',
  'From: a\nTo: b\n: x\n\tFrom: evil\n\nbody\n',
  'From: a\n:\n From: evil\n  continued\n\n',
  'From: a\n  : x\n From: not-evil\n\n',
  ' : x\n From: e\n  vil\n:\n\tX-IGNITE-Zeta: 1\n',
  ' From: first\nTo: b\n',
  'To: b\n: x\n  c, d\n X-IGNITE-Type: t\n',
  'To: b\n From: evil\n',
  ':\n X-IGNITE-Body: evil\n X-IGNITE-Retry-Count: 2\n\n',
  'From: a\r\n: x\r\n From: evil\r\n\r\nbody\r\n',
  'From: a\r: x\r From: evil\r\rbody',
  'From: a\n : \n\u3000From: not-a-continuation\n From: evil\n',
  'From: a\n: x\u2028 From: evil\n',
  'From: a\n: x\v From: evil\x85\tTo: c\n',
  '\ufeffFrom: a\n',
];

const TOKENS = [
  'From',
  'To',
  'Cc',
  'X-IGNITE-',
  'Type',
  'Retry-Count',
  'Body',
  'Status',
  'a',
  'b, c',
  '日本',
  ':',
  ':',
  ': ',
  ' ',
  ' ',
  '\t',
  '\n',
  '\n',
  '\n',
  '\r\n',
  '\r',
  '\n\n',
  '\v',
  '\f',
  '\x1c',
  '\x1f',
  '\x85',
  '\u2028',
  '\u3000',
  '\xa0',
  '\ufeff',
  '=',
  '"',
];
const INVALID_UTF8 = [[0xff], [0xc3], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xc0, 0xaf]];

/** `count` files from `seed`: header-like lines with odd names, indents, line breaks and some bad bytes. */
function generateFiles(seed: number, count: number): Buffer[] {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const files: Buffer[] = [];
  for (let n = 0; n < count; n++) {
    const parts: Buffer[] = [];
    const length = 1 + Math.floor(random() * 24);
    for (let i = 0; i < length; i++) {
      if (random() < 0.01) parts.push(Buffer.from(pick(INVALID_UTF8)));
      // Often a whole line: an empty name, an indented header, or a plain one.
      else if (random() < 0.3)
        parts.push(Buffer.from(pick(['\n: x', '\n From: e', '\n\tX-IGNITE-Q: 1', '\nTo: t'])));
      else parts.push(Buffer.from(pick(TOKENS)));
    }
    files.push(Buffer.concat(parts));
  }
  return files;
}

/** LF text of a file, for the coverage checks (a file that is not UTF-8 gets U+FFFD, which is harmless). */
const lf = (file: Buffer): string => file.toString('utf8').replace(/\r\n?/g, '\n');
const head = (file: Buffer): string => lf(file).split('\n\n')[0] ?? '';

// What the files must reach, so a generator change cannot silently stop covering it.
const COVERAGE: Readonly<Record<string, (file: Buffer, python: string | null) => boolean>> = {
  'indented header after an empty name': (f) => /(^|\n)[ \t]*:[^\n]*\n[ \t]+[^\n:]*:/.test(head(f)),
  'continuation of a named header': (f) => /(^|\n)[^ \t\n:][^\n:]*:[^\n]*\n[ \t]/.test(head(f)),
  'indented first line': (f) => /^[ \t][^\n]*:/.test(f.toString('utf8')),
  'extra X-IGNITE header printed': (_, p) => p !== null && Object.keys(JSON.parse(p) as object).length > 14,
  'from set': (_, p) => p !== null && !p.includes('"from": "",'),
  body: (_, p) => p !== null && !p.includes('"body": ""'),
  'not UTF-8': (_, p) => p === null,
};

const found = findPython();
describe.skipIf('reason' in found)('ignite mime tool - parse against the original rules in Python', () => {
  const python = 'python' in found ? found.python : 'python3';
  const files = [...FIXED_FILES.map((t) => Buffer.from(t)), ...generateFiles(0x35_7, GENERATED)];

  it('prints for every file the text the original prints, and refuses the same files', async () => {
    const expected = runPython(python, files);
    expect(expected).toHaveLength(files.length);
    const mismatches: unknown[] = [];
    const reached = new Map(Object.keys(COVERAGE).map((k) => [k, 0]));
    for (const [i, file] of files.entries()) {
      const want = expected[i] ?? null;
      for (const [name, test] of Object.entries(COVERAGE)) {
        if (test(file, want)) reached.set(name, (reached.get(name) ?? 0) + 1);
      }
      const got = await runMusubi(file);
      if (got !== want) mismatches.push({ file: file.toString('base64'), python: want, musubi: got });
    }
    expect({ count: mismatches.length, first: mismatches.slice(0, 5) }).toEqual({ count: 0, first: [] });
    expect([...reached].filter(([, n]) => n === 0)).toEqual([]);
  });

  it('reads the From of the #35 report from the indented line, as the original does', () => {
    const [report] = runPython(python, [Buffer.from(FIXED_FILES[0] ?? '')]);
    expect(report).toContain('"from": "evil",');
  });

  it('leaves no child process behind', () => expectNoLiveChildren());
});
