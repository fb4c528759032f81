import { shellQuote } from '../../core/shell-quote.js';
import type { OfferedTool } from './conversation.js';

/** A tool call the endpoint makes: function arguments, or the text of a free-form tool. */
export interface ChosenCall {
  readonly name: string;
  readonly input: Readonly<Record<string, unknown>>;
  readonly freeform?: string;
}

const PATH_KEYS = ['file_path', 'filePath', 'path', 'absolute_path', 'filename', 'file'];
const CONTENT_KEYS = ['content', 'file_text', 'contents', 'text', 'new_content'];
const WRITE_NAME = /^(write|write_file|create|create_file|writefile|str_replace_based_edit_tool)$/i;
const SHELL_NAME = /^(bash|shell|exec|exec_command|run_shell_command|local_shell|terminal|powershell)$/i;
const COMMAND_KEYS = ['command', 'cmd', 'commands'];

function propertiesOf(schema: unknown): Record<string, unknown> {
  if (typeof schema !== 'object' || schema === null) return {};
  const props = (schema as { properties?: unknown }).properties;
  return typeof props === 'object' && props !== null ? (props as Record<string, unknown>) : {};
}

function typeOf(property: unknown): string | undefined {
  if (typeof property !== 'object' || property === null) return undefined;
  const t = (property as { type?: unknown }).type;
  return typeof t === 'string' ? t : Array.isArray(t) ? String(t[0]) : undefined;
}

function firstKey(props: Record<string, unknown>, keys: readonly string[]): string | undefined {
  return keys.find((k) => Object.hasOwn(props, k));
}

function shellCall(
  tool: OfferedTool,
  argv: readonly string[],
  cwd: string | undefined,
): ChosenCall | undefined {
  const props = propertiesOf(tool.schema);
  const key = firstKey(props, COMMAND_KEYS);
  if (key === undefined) return undefined;
  const line = argv.map(shellQuote).join(' ');
  // codex's `shell` takes an argv array; everyone else a command line.
  const command = typeOf(props[key]) === 'array' ? ['bash', '-lc', line] : line;
  const input: Record<string, unknown> = { [key]: command };
  if (Object.hasOwn(props, 'description')) input['description'] = 'musubi scripted step';
  if (cwd !== undefined && Object.hasOwn(props, 'workdir')) input['workdir'] = cwd;
  return { name: tool.name, input };
}

/**
 * A call that runs `argv` through the shell tool the CLI offers (`Bash`, `shell`, `run_shell_command`,
 * `bash`…), found by name and by a `command` argument in its schema; undefined when it offers none.
 */
export function chooseShellCall(
  tools: readonly OfferedTool[],
  argv: readonly string[],
  cwd?: string,
): ChosenCall | undefined {
  for (const tool of tools) {
    if (tool.kind !== 'function' || !SHELL_NAME.test(tool.name)) continue;
    const call = shellCall(tool, argv, cwd);
    if (call !== undefined) return call;
  }
  return undefined;
}

/**
 * A call that writes `content` to `path` with the tool the CLI offers: a write/create tool found by name
 * and by path + content arguments in its schema (claude `Write`, gemini `write_file`, opencode `write`,
 * copilot `create`), else codex's free-form `apply_patch`, else a shell tool running printf. `absolute`
 * is the same path made absolute (tools that demand absolute paths get it). Undefined when the CLI offers
 * no tool that can write a file.
 */
export function chooseWriteCall(
  tools: readonly OfferedTool[],
  file: { readonly path: string; readonly absolute: string; readonly content: string },
): ChosenCall | undefined {
  for (const tool of tools) {
    if (tool.kind !== 'function' || !WRITE_NAME.test(tool.name)) continue;
    const props = propertiesOf(tool.schema);
    const pathKey = firstKey(props, PATH_KEYS);
    const contentKey = firstKey(props, CONTENT_KEYS);
    if (pathKey === undefined || contentKey === undefined) continue;
    const input: Record<string, unknown> = { [pathKey]: file.absolute, [contentKey]: file.content };
    if (Object.hasOwn(props, 'command')) input['command'] = 'create';
    return { name: tool.name, input };
  }
  const patch = tools.find((t) => t.name === 'apply_patch');
  if (patch !== undefined) {
    const body = file.content
      .replace(/\n$/, '')
      .split('\n')
      .map((l) => `+${l}`)
      .join('\n');
    const text = `*** Begin Patch\n*** Add File: ${file.path}\n${body}\n*** End Patch\n`;
    if (patch.kind === 'custom') return { name: patch.name, input: {}, freeform: text };
    const props = propertiesOf(patch.schema);
    const key = firstKey(props, ['input', 'patch']) ?? 'input';
    return { name: patch.name, input: { [key]: text } };
  }
  return chooseShellCall(tools, ['sh', '-c', 'printf %s "$1" > "$2"', 'sh', file.content, file.path]);
}

/** Write tools that refuse to overwrite a file not read in the session, and the tool that reads it. */
const READ_BEFORE_WRITE: Readonly<Record<string, string>> = { Write: 'Read' };

/**
 * The read call a real model makes before `write` overwrites an existing file, for a write tool that
 * demands one (claude's `Write` fails with `File has not been read yet` otherwise): its read tool with
 * the write's own path argument. Undefined when the write tool needs no read or no read tool is offered.
 */
export function chooseReadBeforeWrite(
  tools: readonly OfferedTool[],
  write: ChosenCall,
): ChosenCall | undefined {
  const readName = READ_BEFORE_WRITE[write.name];
  const read = tools.find((t) => t.kind === 'function' && t.name === readName);
  if (read === undefined) return undefined;
  const pathKey = firstKey(propertiesOf(read.schema), PATH_KEYS);
  const writePathKey = firstKey(write.input, PATH_KEYS);
  if (pathKey === undefined || writePathKey === undefined) return undefined;
  return { name: read.name, input: { [pathKey]: write.input[writePathKey] } };
}
