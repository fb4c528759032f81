import { z } from 'zod';
import type { ToolCall, ToolOutcome } from '../cli/tool-event.js';

/**
 * One thread item of `codex exec --json` (`item.started` / `item.completed`), the fields of every type
 * in one object: `agent_message` (text), `command_execution` (command, aggregated_output, exit_code,
 * status), `file_change` (changes with path and kind add/delete/update, status), `mcp_tool_call`
 * (server, tool, arguments, result or error, status), `web_search` (query), `error` (message); others
 * (reasoning, todo_list) are skipped.
 */
export const codexItemSchema = z.object({
  id: z.string().optional().catch(undefined),
  type: z.string(),
  text: z.string().optional(),
  message: z.string().optional().catch(undefined),
  command: z.string().optional().catch(undefined),
  aggregated_output: z.string().optional().catch(undefined),
  exit_code: z.number().nullable().optional().catch(undefined),
  status: z.string().optional().catch(undefined),
  changes: z
    .array(z.object({ path: z.string(), kind: z.string().catch('update') }))
    .optional()
    .catch(undefined),
  server: z.string().optional().catch(undefined),
  tool: z.string().optional().catch(undefined),
  arguments: z.unknown().optional(),
  result: z
    .object({
      content: z.array(z.object({ type: z.string(), text: z.string().optional() })).catch([]),
    })
    .nullable()
    .optional()
    .catch(undefined),
  error: z.object({ message: z.string() }).nullable().optional().catch(undefined),
  query: z.string().optional().catch(undefined),
});

/** One codex thread item. */
export type CodexItem = z.infer<typeof codexItemSchema>;

function changesText(item: CodexItem, separator: string): string {
  return (item.changes ?? []).map((c) => `${c.kind} ${c.path}`).join(separator);
}

/** The tool call an item stands for; undefined for items that are no tool call (messages, reasoning). */
export function codexToolCall(item: CodexItem): ToolCall | undefined {
  const callId = item.id;
  switch (item.type) {
    case 'command_execution':
      return { name: item.type, kind: 'command', callId, args: { command: item.command ?? '' } };
    case 'file_change':
      return {
        name: item.type,
        kind: 'edit',
        callId,
        args: { changes: item.changes ?? [] },
        summary: changesText(item, ', '),
      };
    case 'mcp_tool_call':
      // MCP tools are `other` whatever their name: what they touch is the server's business.
      return {
        name: `${item.server ?? 'mcp'}.${item.tool ?? 'tool'}`,
        kind: 'other',
        callId,
        args: item.arguments ?? {},
      };
    case 'web_search':
      return { name: item.type, kind: 'web', callId, args: { query: item.query ?? '' } };
    default:
      return undefined;
  }
}

function commandOutput(item: CodexItem): string {
  const output = item.aggregated_output ?? '';
  const code = item.exit_code;
  if (code === undefined || code === null || code === 0) return output;
  return output === '' ? `[exit code ${code}]` : `${output.replace(/\n$/, '')}\n[exit code ${code}]`;
}

/** What a completed tool item returned; `failed` (and `declined`) items and non-zero exits are errors. */
export function codexToolOutcome(item: CodexItem): ToolOutcome {
  const isFailed = item.status === 'failed' || item.status === 'declined';
  const callId = item.id;
  switch (item.type) {
    case 'command_execution':
      return {
        output: commandOutput(item),
        isError:
          isFailed || (item.exit_code !== undefined && item.exit_code !== null && item.exit_code !== 0),
        callId,
      };
    case 'file_change':
      return { output: changesText(item, '\n'), isError: isFailed, callId };
    case 'mcp_tool_call': {
      const error = item.error?.message;
      const text = (item.result?.content ?? []).map((c) => c.text ?? `[${c.type}]`).join('\n');
      return { output: error ?? text, isError: isFailed || error !== undefined, callId };
    }
    default:
      return { output: '', isError: isFailed, callId };
  }
}
