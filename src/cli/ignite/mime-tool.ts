import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { isMusubiError } from '../../core/errors.js';
import { writeFileAtomicSync } from '../../gateways/ignite/mime/atomic-file-sync.js';
import { toLf } from '../../gateways/ignite/mime/header-text.js';
import { buildMime, type MimeBuildInput } from '../../gateways/ignite/mime/mime-build.js';
import { MimeEditor, parseExtra, updateStatusText } from '../../gateways/ignite/mime/mime-edit.js';
import {
  parseEntries,
  parseMime,
  renderParseJson,
  splitMime,
} from '../../gateways/ignite/mime/mime-parse.js';
import { decodeUtf8Strict } from '../../gateways/ignite/mime/strict-utf8.js';
import type { ArgValue } from './argparse-spec.js';
import { argparseWidth, errorText } from './argparse-text.js';
import { MIME_PROG, mimeSubparser, parseMimeCommandLine, type MimeSubcommand } from './mime-command-line.js';
import { describeFileError, type ToolIo } from './tool-io.js';

type Values = ReadonlyMap<string, ArgValue>;

/** A failed tool run: exit code and the text for stderr. */
class ToolExit {
  constructor(
    readonly code: number,
    readonly text: string,
  ) {}
}

// A one-value dest holds a list only when argparse dropped its value because it was `--` (`--body=--`,
// or a positional `--` after `--`); the tool uses the `--` that was given (docs/ignite.md).
const str = (args: Values, dest: string): string | undefined => {
  const v = args.get(dest);
  return typeof v === 'string' || v === undefined ? v : '--';
};
const list = (args: Values, dest: string): readonly string[] | undefined => {
  const v = args.get(dest);
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

async function build(io: ToolIo, args: Values): Promise<void> {
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

async function runSubcommand(io: ToolIo, sub: MimeSubcommand, args: Values): Promise<void> {
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
  const width = argparseWidth(io.env, io.terminalColumns);
  const line = parseMimeCommandLine(io.argv, width);
  if (line.kind === 'help') {
    io.stdout(line.stdout);
    return 0;
  }
  if (line.kind === 'error') throw new ToolExit(2, line.stderr);
  try {
    await runSubcommand(io, line.command, line.values);
  } catch (err) {
    if (isMusubiError(err, 'GATEWAY_FRAME_INVALID'))
      throw new ToolExit(2, errorText(mimeSubparser(line.command), err.message, width));
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
