/**
 * The texts CPython 3.11's argparse prints, for {@link ParserSpec}s: the usage line, wrapped as
 * `HelpFormatter._format_usage` wraps it, the error report, the terminal width it wraps at, and Python's
 * `repr()` of a string (argparse quotes values with `%r`).
 */
import type { OptionSpec, ParserSpec } from './argparse-spec.js';

/** The fallback of Python's `shutil.get_terminal_size()` when neither COLUMNS nor a terminal tells. */
const FALLBACK_COLUMNS = 80;

/**
 * The width argparse formats at: `shutil.get_terminal_size().columns - 2`, i.e. COLUMNS when it is a
 * positive integer, else the width of the terminal on stdout, else 80.
 */
export function argparseWidth(
  env: Readonly<Record<string, string | undefined>>,
  terminalColumns?: number,
): number {
  const text = env['COLUMNS']?.trim() ?? '';
  const fromEnv = /^[+-]?\d+$/.test(text) ? Number.parseInt(text, 10) : 0;
  const columns =
    fromEnv > 0
      ? fromEnv
      : terminalColumns !== undefined && terminalColumns > 0
        ? terminalColumns
        : FALLBACK_COLUMNS;
  return columns - 2;
}

/** The name of a subparser: its prog after the parent's (argparse's `add_parser(name)` sets that prog). */
export const subcommandName = (parent: ParserSpec, sub: ParserSpec): string =>
  sub.prog.slice(parent.prog.length + 1);

/** `{build,parse,…}`: how argparse shows the choices of a subcommand positional. */
export function subcommandChoices(parser: ParserSpec): string {
  const names = (parser.subcommands?.parsers ?? []).map((sub) => subcommandName(parser, sub));
  return `{${names.join(',')}}`;
}

// The metavar is the dest upper-cased (argparse's default for options).
function optionArgs(option: OptionSpec): string {
  const meta = option.dest.toUpperCase();
  return option.nargs === 1 ? meta : option.nargs === '+' ? `${meta} [${meta} ...]` : `[${meta} ...]`;
}

function optionUsage(option: OptionSpec): string {
  const part = `${option.flags[0] ?? ''} ${optionArgs(option)}`;
  return option.isRequired === true ? part : `[${part}]`;
}

/** How argparse lists one option in its help: `-o OUTPUT, --output OUTPUT`. */
export function optionInvocation(option: OptionSpec): string {
  return option.flags.map((flag) => `${flag} ${optionArgs(option)}`).join(', ');
}

// HelpFormatter's part_regexp: a bracketed group stays whole, anything else splits at spaces.
const USAGE_PART = /\(.*?\)+(?=\s|$)|\[.*?\]+(?=\s|$)|\S+/g;

/**
 * argparse's `format_usage()` for `parser` at `width` (see {@link argparseWidth}): `usage: <prog> …\n`,
 * wrapped onto indented lines when it is too long, exactly as Python 3.11 wraps it.
 */
export function formatUsage(parser: ParserSpec, width: number): string {
  const prefix = 'usage: ';
  const prog = parser.prog;
  const optUsage = ['[-h]', ...parser.options.map(optionUsage)].join(' ');
  const positionals = parser.positionals.map((p) => p.dest);
  if (parser.subcommands !== undefined) positionals.push(`${subcommandChoices(parser)} ...`);
  const posUsage = positionals.join(' ');
  const usage = [prog, [optUsage, posUsage].filter((s) => s !== '').join(' ')].join(' ');
  if (prefix.length + usage.length <= width) return `${prefix}${usage}\n`;
  const optParts = optUsage.match(USAGE_PART) ?? [];
  const posParts = posUsage.match(USAGE_PART) ?? [];
  const getLines = (parts: readonly string[], indent: string, first?: string): string[] => {
    const lines: string[] = [];
    let line: string[] = [];
    let lineLength = (first ?? indent).length - 1;
    for (const part of parts) {
      if (lineLength + 1 + part.length > width && line.length > 0) {
        lines.push(indent + line.join(' '));
        line = [];
        lineLength = indent.length - 1;
      }
      line.push(part);
      lineLength += part.length + 1;
    }
    if (line.length > 0) lines.push(indent + line.join(' '));
    if (first !== undefined && lines[0] !== undefined) lines[0] = lines[0].slice(indent.length);
    return lines;
  };
  let lines: string[];
  if (prefix.length + prog.length <= 0.75 * width) {
    const indent = ' '.repeat(prefix.length + prog.length + 1);
    if (optParts.length > 0) {
      lines = [...getLines([prog, ...optParts], indent, prefix), ...getLines(posParts, indent)];
    } else {
      lines = posParts.length > 0 ? getLines([prog, ...posParts], indent, prefix) : [prog];
    }
  } else {
    const indent = ' '.repeat(prefix.length);
    lines = getLines([...optParts, ...posParts], indent);
    if (lines.length > 1) lines = [...getLines(optParts, indent), ...getLines(posParts, indent)];
    lines = [prog, ...lines];
  }
  return `${prefix}${lines.join('\n')}\n`;
}

/** What argparse's `parser.error(message)` writes to stderr (before it exits with 2). */
export function errorText(parser: ParserSpec, message: string, width: number): string {
  return `${formatUsage(parser, width)}${parser.prog}: error: ${message}\n`;
}
