import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { isMusubiError } from '../../core/errors.js';
import { writeFileAtomicSync } from '../../gateways/ignite/mime/atomic-file-sync.js';
import { hasLineBreak, toLf } from '../../gateways/ignite/mime/header-text.js';
import { buildMime, type MimeBuildInput } from '../../gateways/ignite/mime/mime-build.js';
import { MimeEditor, parseExtra, updateStatusText } from '../../gateways/ignite/mime/mime-edit.js';
import {
  parseEntries,
  parseMime,
  renderParseJson,
  splitMime,
} from '../../gateways/ignite/mime/mime-parse.js';
import { decodeUtf8Strict } from '../../gateways/ignite/mime/strict-utf8.js';
import {
  parseArgs,
  usageOf,
  type OptionSpec,
  type ParsedArgs,
  type PositionalSpec,
} from './argparse-lite.js';
import { describeFileError, type ToolIo } from './tool-io.js';

/** The program name the mime tool's messages show, whatever the invocation (spec/ignite.md 5). */
export const MIME_PROG = 'ignite_mime';
const SUBCOMMANDS = [
  'build',
  'parse',
  'extract-body',
  'update-status',
  'update-header',
  'remove-header',
] as const;
type Subcommand = (typeof SUBCOMMANDS)[number];

const noBreaks = (value: string): string | undefined =>
  hasLineBreak(value) ? 'value must not contain line breaks' : undefined;
const header = (flag: string, dest: string, extra: Partial<OptionSpec> = {}): OptionSpec => ({
  flags: [flag],
  dest,
  nargs: 1,
  check: noBreaks,
  ...extra,
});
const FILE: PositionalSpec = { dest: 'file', help: 'message file' };

const GRAMMAR: Record<Subcommand, { options: OptionSpec[]; positionals: PositionalSpec[]; help: string }> = {
  build: {
    help: 'build a message (stdout, or -o PATH written atomically)',
    options: [
      header('--from', 'from', { isRequired: true }),
      header('--to', 'to', { isRequired: true, nargs: '+' }),
      header('--type', 'type', { isRequired: true }),
      header('--cc', 'cc', { nargs: '*' }),
      header('--priority', 'priority'),
      header('--thread-id', 'thread_id', { metavar: 'THREAD_ID' }),
      header('--in-reply-to', 'in_reply_to', { metavar: 'IN_REPLY_TO' }),
      header('--repo', 'repo'),
      header('--issue', 'issue'),
      header('--status', 'status'),
      { flags: ['--body'], dest: 'body', nargs: 1 },
      { flags: ['--body-file'], dest: 'body_file', nargs: 1, metavar: 'BODY_FILE' },
      { flags: ['-o', '--output'], dest: 'output', nargs: 1 },
    ],
    positionals: [],
  },
  parse: { help: 'print the message as JSON', options: [], positionals: [FILE] },
  'extract-body': { help: 'print the body', options: [], positionals: [FILE] },
  'update-status': {
    help: 'set X-IGNITE-Status (and more headers) in place',
    options: [
      header('--processed-at', 'processed_at', { metavar: 'PROCESSED_AT' }),
      header('--extra', 'extra', { nargs: '*' }),
    ],
    positionals: [FILE, { dest: 'status', check: noBreaks }],
  },
  'update-header': {
    help: 'set one header in place',
    options: [],
    positionals: [FILE, { dest: 'name', check: noBreaks }, { dest: 'value', check: noBreaks }],
  },
  'remove-header': {
    help: 'remove a header in place',
    options: [],
    positionals: [FILE, { dest: 'name', check: noBreaks }],
  },
};

const TOP_USAGE = `usage: ${MIME_PROG} [-h] {${SUBCOMMANDS.join(',')}} ...\n`;

function subUsage(sub: Subcommand): string {
  const g = GRAMMAR[sub];
  const parts = [
    `${MIME_PROG} ${sub}`,
    '[-h]',
    ...g.options.map(usageOf),
    ...g.positionals.map((p) => p.dest),
  ];
  return `usage: ${parts.join(' ')}\n`;
}

function subHelp(sub: Subcommand): string {
  const g = GRAMMAR[sub];
  const lines = [subUsage(sub), `${g.help}\n`];
  if (g.positionals.length > 0)
    lines.push('positional arguments:', ...g.positionals.map((p) => `  ${p.dest}`), '');
  lines.push('options:', '  -h, --help            show this help message and exit');
  for (const o of g.options) lines.push(`  ${usageOf({ ...o, isRequired: true })}`);
  return `${lines.join('\n')}\n`;
}

function topHelp(): string {
  const rows = SUBCOMMANDS.map((s) => `    ${s.padEnd(18)}${GRAMMAR[s].help}`);
  return `${TOP_USAGE}\nIGNITE MIME message tool (musubi)\n\npositional arguments:\n  {${SUBCOMMANDS.join(',')}}\n${rows.join('\n')}\n\noptions:\n  -h, --help            show this help message and exit\n`;
}

/** A failed tool run: exit code and the text for stderr. */
class ToolExit {
  constructor(
    readonly code: number,
    readonly text: string,
  ) {}
}

const str = (args: ParsedArgs, dest: string): string | undefined => {
  const v = args.values.get(dest);
  return typeof v === 'string' ? v : undefined;
};
const list = (args: ParsedArgs, dest: string): readonly string[] | undefined => {
  const v = args.values.get(dest);
  return typeof v === 'string' || v === undefined ? undefined : v;
};

async function readText(io: ToolIo, path: string): Promise<string> {
  try {
    return decodeUtf8Strict(path === '-' ? await io.readStdin() : readFileSync(resolve(io.cwd, path)));
  } catch (err) {
    throw new ToolExit(1, `${describeFileError(err, path)}\n`);
  }
}

async function writeText(io: ToolIo, path: string, text: string): Promise<void> {
  try {
    writeFileAtomicSync(resolve(io.cwd, path), text);
  } catch (err) {
    throw new ToolExit(1, `${describeFileError(err, path)}\n`);
  }
}

async function build(io: ToolIo, args: ParsedArgs): Promise<void> {
  const bodyFile = str(args, 'body_file');
  const body = bodyFile !== undefined ? toLf(await readText(io, bodyFile)) : (str(args, 'body') ?? '');
  const optional = (key: keyof MimeBuildInput, dest: string): Partial<MimeBuildInput> => {
    const v = str(args, dest);
    return v === undefined ? {} : { [key]: v };
  };
  const cc = list(args, 'cc');
  const input: MimeBuildInput = {
    from: str(args, 'from') ?? '',
    to: list(args, 'to') ?? [],
    type: str(args, 'type') ?? '',
    body,
    ...(cc === undefined ? {} : { cc }),
    ...optional('priority', 'priority'),
    ...optional('threadId', 'thread_id'),
    ...optional('inReplyTo', 'in_reply_to'),
    ...optional('repository', 'repo'),
    ...optional('issue', 'issue'),
    ...optional('status', 'status'),
  };
  const text = buildMime(input, { nowMs: io.now(), pid: io.pid });
  const output = str(args, 'output');
  if (output === undefined) io.stdout(text);
  else await writeText(io, output, text);
}

async function runSubcommand(io: ToolIo, sub: Subcommand, args: ParsedArgs): Promise<void> {
  const file = str(args, 'file') ?? '';
  switch (sub) {
    case 'build':
      return build(io, args);
    case 'parse':
      io.stdout(renderParseJson(parseEntries(parseMime(await readText(io, file)))));
      return;
    case 'extract-body':
      io.stdout(splitMime(await readText(io, file)).body);
      return;
    case 'update-status': {
      const text = await readText(io, file);
      const processedAt = str(args, 'processed_at');
      const extras = (list(args, 'extra') ?? []).map(parseExtra);
      const updated = updateStatusText(text, str(args, 'status') ?? '', {
        extras,
        ...(processedAt === undefined ? {} : { processedAt }),
      });
      return writeText(io, file, updated);
    }
    case 'update-header': {
      const text = await readText(io, file);
      return writeText(
        io,
        file,
        new MimeEditor(text).setHeader(str(args, 'name') ?? '', str(args, 'value') ?? '').toString(),
      );
    }
    case 'remove-header': {
      const text = await readText(io, file);
      return writeText(io, file, new MimeEditor(text).removeHeader(str(args, 'name') ?? '').toString());
    }
  }
}

async function dispatch(io: ToolIo): Promise<number> {
  const argv = io.argv;
  const at = argv.findIndex((a) => a !== '-h' && a !== '--help');
  if (at === -1 && argv.length > 0) {
    io.stdout(topHelp());
    return 0;
  }
  const name = argv[at];
  if (name === undefined) {
    throw new ToolExit(2, `${TOP_USAGE}${MIME_PROG}: error: the following arguments are required: command\n`);
  }
  const sub = SUBCOMMANDS.find((s) => s === name);
  if (sub === undefined) {
    const choices = SUBCOMMANDS.map((s) => `'${s}'`).join(', ');
    throw new ToolExit(
      2,
      `${TOP_USAGE}${MIME_PROG}: error: argument command: invalid choice: '${name}' (choose from ${choices})\n`,
    );
  }
  const outcome = parseArgs(argv.slice(at + 1), GRAMMAR[sub].options, GRAMMAR[sub].positionals);
  if (!outcome.ok) throw new ToolExit(2, `${subUsage(sub)}${MIME_PROG} ${sub}: error: ${outcome.error}\n`);
  if (outcome.args.isHelp) {
    io.stdout(subHelp(sub));
    return 0;
  }
  if (outcome.args.extras.length > 0) {
    throw new ToolExit(
      2,
      `${TOP_USAGE}${MIME_PROG}: error: unrecognized arguments: ${outcome.args.extras.join(' ')}\n`,
    );
  }
  try {
    await runSubcommand(io, sub, outcome.args);
  } catch (err) {
    if (isMusubiError(err, 'GATEWAY_FRAME_INVALID'))
      throw new ToolExit(2, `${subUsage(sub)}${MIME_PROG} ${sub}: error: ${err.message}\n`);
    throw err;
  }
  return 0;
}

/**
 * The IGNITE mime tool (`musubi ignite mime …`, spec/ignite.md 3.1 and 5). Writes its output and
 * one-line errors through `io` and resolves the exit code: 0 success, 1 file problems, 2 usage errors.
 * Never rejects for expected failures.
 */
export async function runMimeTool(io: ToolIo): Promise<number> {
  try {
    return await dispatch(io);
  } catch (err) {
    if (err instanceof ToolExit) {
      io.stderr(err.text);
      return err.code;
    }
    io.stderr(`${MIME_PROG}: error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
