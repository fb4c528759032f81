import { describe, expect, it } from 'vitest';
import { parseArgs } from './argparse-lite.js';
import type { ParserSpec } from './argparse-spec.js';
import { pyReprString } from '../../core/python/repr.js';
import { argparseWidth, errorText, formatUsage } from './argparse-text.js';

// argparse's rules on a small parser; the mime tool's full grammar is compared with Python's own argparse
// in test/integration/ignite-tools-argparse.test.ts.

const SUB: ParserSpec = {
  prog: 'tool run',
  options: [
    { flags: ['--name'], dest: 'name', nargs: 1, isRequired: true },
    { flags: ['--names'], dest: 'names', nargs: '*' },
    { flags: ['-o', '--output'], dest: 'output', nargs: 1 },
  ],
  positionals: [{ dest: 'file', check: (v) => (v.includes('\n') ? 'no newlines' : undefined) }],
};
const TOP: ParserSpec = {
  prog: 'tool',
  options: [],
  positionals: [],
  subcommands: { dest: 'cmd', parsers: [SUB] },
};

const values = (...argv: string[]): Record<string, unknown> => {
  const outcome = parseArgs(TOP, argv);
  return outcome.kind === 'parsed' ? Object.fromEntries(outcome.values) : { [outcome.kind]: outcome };
};
const error = (...argv: string[]): string => {
  const outcome = parseArgs(TOP, argv);
  return outcome.kind === 'error' ? `${outcome.parser.prog}: ${outcome.message}` : outcome.kind;
};

describe('argparse-lite - Python 3.11 argparse rules', () => {
  it('splits `--opt=value` at the first `=` before looking at spaces, dashes or prefixes', () => {
    expect(values('run', 'f', '--name=a b=c', '-o=-x y')).toEqual({
      cmd: 'run',
      file: 'f',
      name: 'a b=c',
      output: '-x y',
    });
    expect(values('run', '--name', '-5', '-o -x', '--name x y')).toMatchObject({ name: '-5', output: ' -x' });
    expect(error('run', 'f', '--name', 'a', '--name x y')).toBe('tool: unrecognized arguments: --name x y');
  });

  it('accepts unique prefixes and names every match of an ambiguous one, `=` part included', () => {
    expect(values('run', 'f', '--names', 'a', 'b', '--name=x', '--out', 'o')).toMatchObject({
      names: ['a', 'b'],
      output: 'o',
    });
    expect(error('run', '--nam=x')).toBe('tool run: ambiguous option: --nam=x could match --name, --names');
  });

  it('reports errors in argparse order: classification first, then options and positionals as met', () => {
    expect(error('run', '-h', '--nam', 'x')).toBe(
      'tool run: ambiguous option: --nam could match --name, --names',
    );
    expect(error('run', 'a\nb', '--name')).toBe('tool run: argument file: no newlines');
    expect(error('run', '-hx')).toBe("tool run: argument -h/--help: ignored explicit argument 'x'");
    expect(parseArgs(TOP, ['run', '-ho', 'x']).kind).toBe('help');
    expect(error('run', '--names')).toBe('tool run: the following arguments are required: --name, file');
    expect(error('-x')).toBe('tool: the following arguments are required: cmd');
    expect(error('--', 'run')).toMatch(/^tool: argument cmd: invalid choice: '--' \(choose from 'run'\)$/);
  });

  it('drops the first `--` of each value list, as 3.11 does (an explicit `--` leaves an empty list)', () => {
    expect(values('run', '--name', 'n', '--', '-f')).toMatchObject({ file: '-f' });
    expect(values('run', '--name=--', '-o=--', 'f')).toMatchObject({ name: [], output: [] });
    expect(error('run', 'f', '--name', 'n', '--', 'g')).toBe('tool: unrecognized arguments: -- g');
    expect(error('run', '--name', 'n', 'f', '--', 'g')).toBe('tool: unrecognized arguments: g'); // `f` took the `--`
  });
});

describe('argparse-text - usage, width and repr as Python prints them', () => {
  it('wraps the usage at the width and indents under the program name', () => {
    expect(formatUsage(SUB, 78)).toBe(
      'usage: tool run [-h] --name NAME [--names [NAMES ...]] [-o OUTPUT] file\n',
    );
    expect(errorText(SUB, 'boom', 40)).toBe(
      'usage: tool run [-h] --name NAME\n                [--names [NAMES ...]]\n                [-o OUTPUT]\n                file\ntool run: error: boom\n',
    );
  });

  it('takes the width from COLUMNS, then the terminal, then 80, less 2', () => {
    expect([
      argparseWidth({}),
      argparseWidth({ COLUMNS: ' 100 ' }),
      argparseWidth({ COLUMNS: 'x' }, 50),
    ]).toEqual([78, 98, 48]);
  });

  it('quotes like repr(): quote choice, escapes, non-printable characters', () => {
    expect([
      pyReprString('a'),
      pyReprString("it's"),
      pyReprString(`'"`),
      pyReprString('a\\b\n\t'),
      pyReprString('日本\u200b\x1b\u00a0'),
    ]).toEqual(["'a'", `"it's"`, `'\\'"'`, "'a\\\\b\\n\\t'", "'日本\\u200b\\x1b\\xa0'"]);
    expect(pyReprString('\ud800😀')).toBe("'\\ud800😀'");
  });
});
