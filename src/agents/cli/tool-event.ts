import type { AgentRunEvent, ToolKind } from '../agent-runner.js';

/** The `tool` event of {@link AgentRunEvent}. */
export type ToolEvent = Extract<AgentRunEvent, { type: 'tool' }>;
/** The `tool_result` event of {@link AgentRunEvent}. */
export type ToolResultEvent = Extract<AgentRunEvent, { type: 'tool_result' }>;

/** The longest `summary` of a tool event, in characters (the cut adds a trailing `…`). */
export const TOOL_SUMMARY_MAX_CHARS = 200;
/** The longest `input`, `output` or error text of an event, in characters, before the cut note. */
export const EVENT_TEXT_MAX_CHARS = 4096;

/**
 * `text` cut to `maxChars` characters, with a note of how many were dropped
 * (`… [12345 more characters]`); unchanged when it fits.
 */
export function cutText(text: string, maxChars: number = EVENT_TEXT_MAX_CHARS): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}… [${text.length - maxChars} more characters]`;
}

/** `text` on one line (line breaks and the blanks around them become one space), cut with `…`. */
export function oneLine(text: string, maxChars: number = TOOL_SUMMARY_MAX_CHARS): string {
  const line = text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
  return line.length <= maxChars ? line : `${line.slice(0, maxChars - 1)}…`;
}

// Tool names of the CLIs, lowercased without `_` and `-`: claude (`Bash`, `MultiEdit`), gemini
// (`run_shell_command`, `write_file`), copilot (`bash`, `create`, `view`), opencode (`bash`, `webfetch`).
const KIND_BY_NAME: Readonly<Record<string, ToolKind>> = {
  bash: 'command',
  bashoutput: 'command',
  killshell: 'command',
  shell: 'command',
  runshellcommand: 'command',
  readbash: 'command',
  writebash: 'command',
  stopbash: 'command',
  edit: 'edit',
  multiedit: 'edit',
  write: 'edit',
  notebookedit: 'edit',
  create: 'edit',
  writefile: 'edit',
  replace: 'edit',
  patch: 'edit',
  applypatch: 'edit',
  strreplaceeditor: 'edit',
  read: 'read',
  view: 'read',
  readfile: 'read',
  readmanyfiles: 'read',
  grep: 'search',
  glob: 'search',
  ls: 'search',
  list: 'search',
  listdirectory: 'search',
  searchfilecontent: 'search',
  codesearch: 'search',
  webfetch: 'web',
  websearch: 'web',
  googlewebsearch: 'web',
};

/**
 * What a tool does, from its name as any of the CLIs spells it (case, `_` and `-` ignored); `other`
 * for the rest, MCP tools (`mcp__server__tool`) included.
 */
export function toolKindOf(name: string): ToolKind {
  return KIND_BY_NAME[name.toLowerCase().replace(/[_-]/g, '')] ?? 'other';
}

// Argument names whose value best says what a call does, most telling first: the command line, the file,
// the pattern or query, the URL, the folder; `path` comes after `pattern` because grep tools take both.
const SUMMARY_KEYS = [
  'command',
  'cmd',
  'file_path',
  'filePath',
  'notebook_path',
  'absolute_path',
  'pattern',
  'query',
  'url',
  'path',
  'dir_path',
  'description',
  'prompt',
];

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The most telling argument of a call (see SUMMARY_KEYS), an argv array joined; undefined if none. */
export function argsSummary(args: unknown): string | undefined {
  if (!isRecord(args)) return undefined;
  for (const key of SUMMARY_KEYS) {
    const value = args[key];
    if (typeof value === 'string' && value.trim() !== '') return value;
    if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string'))
      return value.join(' ');
  }
  return undefined;
}

/** The arguments as JSON text (a string is taken as already being that text). */
function argsText(args: unknown): string {
  if (typeof args === 'string') return args;
  return JSON.stringify(args ?? {}) ?? '{}';
}

/** A tool call as a backend read it from its CLI's stream. */
export interface ToolCall {
  /** The tool's name as the CLI reports it. */
  readonly name: string;
  /** The arguments: an object (or a JSON string) as the CLI reports them. */
  readonly args: unknown;
  readonly callId?: string | undefined;
  /** Defaults to {@link toolKindOf} of the name. */
  readonly kind?: ToolKind;
  /** Defaults to {@link argsSummary} of the arguments, else the name. */
  readonly summary?: string;
}

/** The `tool` event of a call: a one-line summary, the arguments as JSON text cut at 4 KiB. */
export function toolEvent(call: ToolCall): ToolEvent {
  return {
    type: 'tool',
    ...(call.callId !== undefined && { callId: call.callId }),
    name: call.name,
    kind: call.kind ?? toolKindOf(call.name),
    summary: oneLine(call.summary ?? argsSummary(call.args) ?? call.name),
    input: cutText(argsText(call.args)),
  };
}

/** What a tool call returned, as a backend read it. */
export interface ToolOutcome {
  readonly output: string;
  readonly isError: boolean;
  readonly callId?: string | undefined;
}

/** The `tool_result` event of an outcome, its output cut at 4 KiB. */
export function toolResultEvent(outcome: ToolOutcome): ToolResultEvent {
  return {
    type: 'tool_result',
    ...(outcome.callId !== undefined && { callId: outcome.callId }),
    isError: outcome.isError,
    output: cutText(outcome.output),
  };
}
