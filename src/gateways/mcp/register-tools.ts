import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { registerAckTool } from './ack-tool.js';
import { registerBroadcastTool } from './broadcast-tool.js';
import type { McpToolContext } from './mcp-tool-context.js';
import { registerPeekTool } from './peek-tool.js';
import { registerReceiveTool } from './receive-tool.js';
import { registerSayTool } from './say-tool.js';
import { registerSendTool } from './send-tool.js';
import { registerStatusTool } from './status-tool.js';
import { registerTasksTool } from './tasks-tool.js';

/** The names of the tools {@link registerTools} adds, in listing order. */
export const MCP_TOOL_NAMES = [
  'send',
  'broadcast',
  'receive',
  'ack',
  'peek',
  'status',
  'tasks',
  'say',
] as const;

/** Adds every musubi tool to `server`; they act for `ctx.agent`. */
export function registerTools(server: McpServer, ctx: McpToolContext): void {
  registerSendTool(server, ctx);
  registerBroadcastTool(server, ctx);
  registerReceiveTool(server, ctx);
  registerAckTool(server, ctx);
  registerPeekTool(server, ctx);
  registerStatusTool(server, ctx);
  registerTasksTool(server, ctx);
  registerSayTool(server, ctx);
}
