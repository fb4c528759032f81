import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pyJson, type PyJsonInput } from '../../core/python/json-dumps.js';
import { JsonNumber, isJsonObject, parseJson, type JsonObject } from '../../core/python/json-loads.js';
import { parsePyInt } from '../../core/python/numbers.js';
import { isTruthy, pyStr } from '../../core/python/repr.js';
import { requestLine } from '../../gateways/agent-sync/agent-sync-client.js';
import { isFileNamePart } from './notifier.js';

/** The three editor hooks. */
export const HOOK_KINDS = ['block-stop', 'check-messages', 'block-questions'] as const;
export type HookKind = (typeof HOOK_KINDS)[number];
export const HOOK_FORMATS = ['copilot', 'claude'] as const;
export type HookFormat = (typeof HOOK_FORMATS)[number];

const READ_ONLY_TOOLS = [
  'read_file',
  'grep_search',
  'file_search',
  'list_dir',
  'semantic_search',
  'view_image',
];
const CLAUDE_READ_ONLY_TOOLS = ['Read', 'Grep', 'Glob', 'LS'];
const QUESTIONS_BANNED =
  '質問は禁止。最も合理的な仮定を立てて作業を続行せよ。不明点は TODO コメントとして残せ。';
const BODY_CHARS = 600;

/** What a hook run printed and its exit code. */
export interface HookResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Inputs of {@link runHook}. */
export interface HookOptions {
  readonly kind: HookKind;
  readonly format: HookFormat;
  readonly stdinText: string;
  readonly env: NodeJS.ProcessEnv;
  /** The hook's working directory (agent files are read from `.github/agents/` under it). */
  readonly cwd: string;
}

/** Python json.dumps defaults: ASCII only, `", "` / `": "`. */
const dump = (v: PyJsonInput): string => `${pyJson(v, { ensureAscii: true })}\n`;
const allow = (): HookResult => ({ exitCode: 0, stdout: '{}\n', stderr: '' });

async function peek(agent: string, port: number, timeoutMs: number): Promise<JsonObject | null> {
  const line = pyJson({ cmd: 'peek', agent }, { ensureAscii: true });
  const result = await requestLine({ host: '127.0.0.1', port, line, timeoutMs });
  if (!result.ok) return null;
  const parsed = parseJson(result.line);
  if (!parsed.ok || !isJsonObject(parsed.value) || parsed.value.get('ok') !== true) return null;
  return parsed.value;
}

function count(v: unknown): number {
  return v instanceof JsonNumber ? v.value : typeof v === 'boolean' ? Number(v) : 0;
}

/** The agent file body: after the second `---`, trimmed, first 600 characters. */
async function agentBody(cwd: string, agent: string): Promise<string> {
  // A name with a path separator would read a file outside .github/agents: no body then.
  if (!isFileNamePart(agent)) return '';
  for (const name of [`${agent}.agent.md`, `${agent}.md`]) {
    let text: string;
    try {
      text = await readFile(join(cwd, '.github', 'agents', name), 'utf8');
    } catch {
      continue; // a missing (or unreadable) agent file just means no body to re-inject
    }
    const parts = text.split('---');
    const body = parts.length >= 3 ? parts.slice(2).join('---') : text;
    return Array.from(body.trim()).slice(0, BODY_CHARS).join('');
  }
  return '';
}

async function blockStop(
  input: JsonObject,
  o: HookOptions,
  agent: string,
  port: number,
  listen: string,
): Promise<HookResult> {
  const reply = await peek(agent, port, 3_000);
  if (reply === null) return allow();
  const phase = pyStr(reply.get('phase') ?? 'SHUTDOWN');
  if (phase === 'SHUTDOWN') return allow();
  const pendingValue = reply.get('pending') ?? new JsonNumber('0');
  const round = pyStr(reply.get('round') ?? new JsonNumber('0'));
  const listenLine = `  ${listen} ${agent} --timeout 30 --port ${port}\n`;
  let reason: string;
  if (count(pendingValue) > 0) {
    const k = pyStr(pendingValue);
    reason = `[agent_sync] phase=${phase} round=${round} pending=${k}\nメールボックスに${k}件のメッセージ。今すぐ取得:\n${listenLine}`;
  } else if (isTruthy(input.get('stop_hook_active') ?? false)) return allow();
  else
    reason = `[agent_sync] phase=${phase} round=${round}\nタスク待機中。listen で次の指示を待て:\n${listenLine}`;
  const body = await agentBody(o.cwd, agent);
  if (body !== '') reason += `\n--- core instructions ---\n${body}\n`;
  const out =
    o.format === 'claude'
      ? { decision: 'block', reason }
      : { hookSpecificOutput: { hookEventName: 'Stop', decision: 'block', reason } };
  return { exitCode: 0, stdout: dump(out), stderr: '' };
}

async function checkMessages(
  input: JsonObject,
  o: HookOptions,
  agent: string,
  port: number,
  listen: string,
): Promise<HookResult> {
  const tool = input.get('tool_name') ?? '';
  const skipped = o.format === 'claude' ? [...READ_ONLY_TOOLS, ...CLAUDE_READ_ONLY_TOOLS] : READ_ONLY_TOOLS;
  if (typeof tool === 'string' && skipped.includes(tool)) return allow();
  const reply = await peek(agent, port, 2_000);
  const pending = reply?.get('pending') ?? new JsonNumber('0');
  if (reply === null || count(pending) === 0) return allow();
  const phase = pyStr(reply.get('phase') ?? '');
  const round = pyStr(reply.get('round') ?? new JsonNumber('0'));
  const context =
    `\u{1F514} [agent_sync] ${pyStr(pending)}件の新着メッセージ (phase=${phase}, round=${round})\n` +
    `今すぐ確認: ${listen} ${agent} --timeout 5 --port ${port}`;
  const out = { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: context } };
  return { exitCode: 0, stdout: dump(out), stderr: '' };
}

function blockQuestions(input: JsonObject, format: HookFormat): HookResult {
  const tool = input.get('tool_name');
  if (format === 'copilot') {
    if (tool !== 'vscode_askQuestions') return allow();
    const out = {
      hookSpecificOutput: { hookEventName: 'PreToolUse', decision: 'block', reason: QUESTIONS_BANNED },
    };
    return { exitCode: 0, stdout: dump(out), stderr: '' };
  }
  if (tool !== 'vscode_askQuestions' && tool !== 'AskUserQuestion') return allow();
  const out = {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: QUESTIONS_BANNED,
    },
  };
  return { exitCode: 0, stdout: dump(out), stderr: '' };
}

/** AGENT_SYNC_PORT as Python's int() reads it, or null. */
function parsePort(raw: string | undefined): number | null {
  if (raw === undefined) return 9800;
  return parsePyInt(raw) ?? null;
}

/**
 * Runs one hook: reads the event JSON, decides, and returns exactly one JSON line (Python `json.dumps`
 * bytes) with exit 0. Fails open (`{}`) whenever the server cannot be asked. Empty or invalid stdin, or a
 * non-integer AGENT_SYNC_PORT, give a message on stderr and exit 1.
 */
export async function runHook(options: HookOptions): Promise<HookResult> {
  const parsed = parseJson(options.stdinText);
  if (options.stdinText.trim() === '' || !parsed.ok || !isJsonObject(parsed.value)) {
    return {
      exitCode: 1,
      stdout: '',
      stderr: `agent_sync hook ${options.kind}: expected one JSON object on stdin\n`,
    };
  }
  if (options.kind === 'block-questions') return blockQuestions(parsed.value, options.format);
  const port = parsePort(options.env['AGENT_SYNC_PORT']);
  if (port === null) {
    return { exitCode: 1, stdout: '', stderr: `agent_sync hook: AGENT_SYNC_PORT must be an integer\n` };
  }
  const agent = options.env['AGENT_SYNC_NAME'] ?? 'agent-a';
  const listen = options.env['AGENT_SYNC_LISTEN_CMD'] ?? 'musubi agent-sync listen';
  return options.kind === 'block-stop'
    ? blockStop(parsed.value, options, agent, port, listen)
    : checkMessages(parsed.value, options, agent, port, listen);
}
