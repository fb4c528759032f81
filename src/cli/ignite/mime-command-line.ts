/**
 * The command line of the IGNITE mime tool: the original's argparse parsers (spec/ignite.md 3.1 and 5) as
 * {@link ParserSpec}s, and what argparse makes of an argv for them: a subcommand to run with its values,
 * help for stdout, or a usage error for stderr.
 */
import { hasLineBreak } from '../../gateways/ignite/mime/header-text.js';
import { parseArgs } from './argparse-lite.js';
import type { ArgValue, OptionSpec, ParserSpec } from './argparse-spec.js';
import {
  errorText,
  formatUsage,
  optionInvocation,
  subcommandChoices,
  subcommandName,
} from './argparse-text.js';

/** The program name the mime tool's messages show, whatever the invocation (spec/ignite.md 5). */
export const MIME_PROG = 'ignite_mime';

/** The mime tool's subcommands, in the order the original declared them. */
const MIME_SUBCOMMANDS = [
  'build',
  'parse',
  'extract-body',
  'update-status',
  'update-header',
  'remove-header',
] as const;
/** One of {@link MIME_SUBCOMMANDS}. */
export type MimeSubcommand = (typeof MIME_SUBCOMMANDS)[number];

// Refusing line breaks is musubi's deviation 7.1; it is checked where argparse would run a `type=`.
const noBreaks = (value: string): string | undefined =>
  hasLineBreak(value) ? 'value must not contain line breaks' : undefined;
const header = (flag: string, extra: Partial<OptionSpec> = {}): OptionSpec => ({
  flags: [flag],
  dest: flag.slice(2).replaceAll('-', '_'),
  nargs: 1,
  check: noBreaks,
  ...extra,
});
const sub = (name: MimeSubcommand, help: string, rest: Omit<ParserSpec, 'prog' | 'help'>): ParserSpec => ({
  prog: `${MIME_PROG} ${name}`,
  help,
  ...rest,
});
const FILE = { dest: 'file' } as const;

/** The original's parsers: `ignite_mime` with a required subcommand in `command`. */
const MIME_PARSER: ParserSpec = {
  prog: MIME_PROG,
  help: 'IGNITE MIME message tool (musubi)',
  options: [],
  positionals: [],
  subcommands: {
    dest: 'command',
    parsers: [
      sub('build', 'build a message (stdout, or -o PATH written atomically)', {
        options: [
          header('--from', { isRequired: true }),
          header('--to', { isRequired: true, nargs: '+' }),
          header('--type', { isRequired: true }),
          header('--cc', { nargs: '*' }),
          ...['--priority', '--thread-id', '--in-reply-to', '--repo', '--issue', '--status'].map((f) =>
            header(f),
          ),
          { flags: ['--body'], dest: 'body', nargs: 1 },
          { flags: ['--body-file'], dest: 'body_file', nargs: 1 },
          { flags: ['-o', '--output'], dest: 'output', nargs: 1 },
        ],
        positionals: [],
      }),
      sub('parse', 'print the message as JSON', { options: [], positionals: [FILE] }),
      sub('extract-body', 'print the body', { options: [], positionals: [FILE] }),
      sub('update-status', 'set X-IGNITE-Status (and more headers) in place', {
        options: [header('--processed-at'), header('--extra', { nargs: '*' })],
        positionals: [FILE, { dest: 'status', check: noBreaks }],
      }),
      sub('update-header', 'set one header in place', {
        options: [],
        positionals: [FILE, { dest: 'name', check: noBreaks }, { dest: 'value', check: noBreaks }],
      }),
      sub('remove-header', 'remove a header in place', {
        options: [],
        positionals: [FILE, { dest: 'name', check: noBreaks }],
      }),
    ],
  },
};

const HELP_LINE = '  -h, --help            show this help message and exit';

/** The `-h` text of one parser: argparse's usage, then musubi's own short listing. */
function mimeHelp(parser: ParserSpec, width: number): string {
  const lines = [formatUsage(parser, width), `${parser.help ?? ''}\n`];
  const subs = parser.subcommands?.parsers ?? [];
  if (parser.positionals.length > 0 || subs.length > 0) {
    lines.push('positional arguments:', ...parser.positionals.map((p) => `  ${p.dest}`));
    if (subs.length > 0) lines.push(`  ${subcommandChoices(parser)}`);
    for (const s of subs) lines.push(`    ${subcommandName(parser, s).padEnd(18)}${s.help ?? ''}`);
    lines.push('');
  }
  lines.push('options:', HELP_LINE, ...parser.options.map((o) => `  ${optionInvocation(o)}`));
  return `${lines.join('\n')}\n`;
}

/** The parser of one subcommand. */
export function mimeSubparser(command: MimeSubcommand): ParserSpec {
  return MIME_PARSER.subcommands?.parsers.find((p) => p.prog === `${MIME_PROG} ${command}`) ?? MIME_PARSER;
}

/** What the mime tool does with its argv: run a subcommand, print help (exit 0), or fail (exit 2). */
export type MimeCommandLine =
  | {
      readonly kind: 'run';
      readonly command: MimeSubcommand;
      readonly values: ReadonlyMap<string, ArgValue>;
    }
  | { readonly kind: 'help'; readonly stdout: string }
  | { readonly kind: 'error'; readonly stderr: string };

/**
 * Parses the mime tool's argv as the original's argparse parsers would; texts are formatted at `width`
 * (`argparseWidth`). Never throws.
 */
export function parseMimeCommandLine(argv: readonly string[], width: number): MimeCommandLine {
  const outcome = parseArgs(MIME_PARSER, argv);
  if (outcome.kind === 'help') return { kind: 'help', stdout: mimeHelp(outcome.parser, width) };
  if (outcome.kind === 'error') {
    return { kind: 'error', stderr: errorText(outcome.parser, outcome.message, width) };
  }
  const name = outcome.values.get('command');
  const command = MIME_SUBCOMMANDS.find((s) => s === name) ?? 'build';
  return { kind: 'run', command, values: outcome.values };
}
