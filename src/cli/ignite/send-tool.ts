import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { isMusubiError } from '../../core/errors.js';
import { toLf } from '../../gateways/ignite/mime/header-text.js';
import { buildMime } from '../../gateways/ignite/mime/mime-build.js';
import { writeNewQueueFileSync } from '../../gateways/ignite/mime/queue-file-writer-sync.js';
import { decodeUtf8Strict } from '../../gateways/ignite/mime/strict-utf8.js';
import { isSendRecipient, isSendableType, SEND_RECIPIENTS_TEXT } from '../../gateways/ignite/agent-names.js';
import { describeFileError, type ToolIo } from './tool-io.js';

/** The name the send tool's texts show when it is not run through a `send_message.sh` wrapper. */
export const SEND_TOOL_NAME = 'musubi ignite send';

/** The help text of spec/ignite.md 6.2 with `<tool>` substituted. */
export function sendHelp(tool: string): string {
  return `使用方法:
  ${tool} <type> <from> <to> [options]

位置引数（必須）:
  type    メッセージタイプ（例: task_assignment, task_completed）
  from    送信元エージェント名
  to      送信先エージェント名

オプション:
  --body <string>       ペイロード（インライン文字列）
  --body-file <path>    ペイロード（ファイルパス、"-" でstdin）
  --priority <level>    優先度（デフォルト: normal）
  --repo <owner/name>   リポジトリ名
  --issue <number>      Issue番号
  --thread-id <id>      スレッドID
  --in-reply-to <msgid> 返信先Message-ID
  -h, --help            このヘルプを表示

後方互換（位置引数のみ）:
  ${tool} <type> <from> <to> <payload> [priority]
`;
}

interface SendOptions {
  body?: string;
  bodyFile?: string;
  priority: string;
  repo?: string;
  issue?: string;
  threadId?: string;
  inReplyTo?: string;
}

const VALUE_OPTIONS: Record<string, keyof SendOptions> = {
  '--body': 'body',
  '--body-file': 'bodyFile',
  '--priority': 'priority',
  '--repo': 'repo',
  '--issue': 'issue',
  '--thread-id': 'threadId',
  '--in-reply-to': 'inReplyTo',
};

class SendExit {
  constructor(readonly code: number) {}
}

function parseOptions(io: ToolIo, rest: readonly string[], tool: string): SendOptions {
  const options: SendOptions = { priority: 'normal' };
  const first = rest[0];
  if (first !== undefined && !first.startsWith('--') && first !== '-h') {
    // Legacy positional form: <payload> [priority]; further arguments are ignored.
    options.body = first;
    options.priority = rest[1] ?? 'normal';
    return options;
  }
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] ?? '';
    if (arg === '-h' || arg === '--help') {
      io.stdout(sendHelp(tool));
      throw new SendExit(0);
    }
    const key = VALUE_OPTIONS[arg];
    if (key === undefined) {
      io.stderr(`❌ エラー: 不明なオプション: ${arg}\n`);
      io.stdout(sendHelp(tool));
      throw new SendExit(1);
    }
    const value = rest[i + 1];
    if (value === undefined) {
      io.stderr(`❌ エラー: オプションに値がありません: ${arg}\n`);
      throw new SendExit(1);
    }
    if (key === 'body') {
      io.stderr('警告: --body はエスケープ問題が発生しやすいため --body-file の使用を推奨します\n');
    }
    options[key] = value;
    i++;
  }
  return options;
}

async function queueDir(io: ToolIo, to: string): Promise<string> {
  const workspace = io.env['WORKSPACE_DIR'] || '.';
  const isDir =
    statSync(resolve(io.cwd, `${workspace}/.ignite`), { throwIfNoEntry: false })?.isDirectory() === true;
  const runtime = io.env['IGNITE_RUNTIME_DIR'] ?? '';
  if (isDir) return `${workspace}/.ignite/queue/${to}`;
  if (runtime !== '') return `${runtime}/queue/${to}`;
  io.stderr('❌ エラー: .ignite/ ディレクトリが見つかりません。ignite init を実行してください\n');
  throw new SendExit(1);
}

async function readBody(io: ToolIo, options: SendOptions): Promise<string> {
  if (options.bodyFile === undefined) return toLf(options.body ?? '');
  const path = options.bodyFile;
  try {
    return toLf(decodeUtf8Strict(path === '-' ? await io.readStdin() : readFileSync(resolve(io.cwd, path))));
  } catch (err) {
    io.stderr(`${describeFileError(err, path)}\n❌ エラー: MIMEメッセージの生成に失敗しました\n`);
    throw new SendExit(1);
  }
}

async function send(io: ToolIo, tool: string): Promise<number> {
  if (io.argv.length < 3) {
    io.stdout(sendHelp(tool));
    return 1;
  }
  const [type = '', from = '', to = ''] = io.argv;
  const options = parseOptions(io, io.argv.slice(3), tool);
  if (!isSendRecipient(to)) {
    io.stderr(
      `❌ エラー: 不正な宛先エージェント名: '${to}'\n  有効な宛先: ${SEND_RECIPIENTS_TEXT}\n` +
        `  ヒント: ${tool} <type> <from> <to> の第3引数はエージェント名です\n`,
    );
    return 1;
  }
  if (!isSendableType(type)) {
    io.stderr(`❌ エラー: 不正なメッセージタイプ: '${type}'\n`);
    return 1;
  }
  const dir = await queueDir(io, to);
  const body = await readBody(io, options);
  try {
    mkdirSync(resolve(io.cwd, dir), { recursive: true });
    const content = buildMime(
      {
        from,
        to: [to],
        type,
        priority: options.priority,
        body,
        ...(options.repo ? { repository: options.repo } : {}),
        ...(options.issue ? { issue: options.issue } : {}),
        ...(options.threadId ? { threadId: options.threadId } : {}),
        ...(options.inReplyTo ? { inReplyTo: options.inReplyTo } : {}),
      },
      { nowMs: io.now(), pid: io.pid },
    );
    const path = writeNewQueueFileSync({
      dir: resolveKeepingForm(io.cwd, dir),
      type,
      content,
      nowMs: io.now(),
    });
    io.stdout(`✓ メッセージを送信しました: ${displayPath(io.cwd, dir, path)}\n`);
    return 0;
  } catch (err) {
    const why = isMusubiError(err) ? `ignite_mime build: error: ${err.message}` : describeFileError(err, dir);
    io.stderr(`${why}\n❌ エラー: MIMEメッセージの生成に失敗しました\n`);
    return 1;
  }
}

// The file is written at the absolute location, but reported exactly as constructed (`./.ignite/…`).
function resolveKeepingForm(cwd: string, dir: string): string {
  return resolve(cwd, dir);
}

function displayPath(cwd: string, dir: string, written: string): string {
  return `${dir}/${written.slice(resolve(cwd, dir).length + 1)}`;
}

/**
 * The IGNITE send tool (spec/ignite.md 6.2): `<type> <from> <to> [options]` or the legacy
 * `<type> <from> <to> <payload> [priority]`. `tool` is the name its texts show. Resolves the exit code.
 */
export async function runSendTool(io: ToolIo, tool: string = SEND_TOOL_NAME): Promise<number> {
  try {
    return await send(io, tool);
  } catch (err) {
    if (err instanceof SendExit) return err.code;
    io.stderr(`❌ エラー: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
