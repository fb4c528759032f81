import type { Readable, Writable } from 'node:stream';
import { AgentDirectory } from '../bus/agent-directory.js';
import { knownSecrets } from '../agents/secrets/known-secrets.js';
import { SecretMask } from '../core/secret-mask.js';
import { withMaskedSends } from '../gateways/mcp/masked-bus.js';
import { McpAgentServer } from '../gateways/mcp/mcp-agent-server.js';
import { openHub, type OpenHubOptions } from './hub.js';

/** Options of {@link openMcpServer}. */
export interface OpenMcpServerOptions extends OpenHubOptions {
  /** The agent the server acts for (its mailbox and sender name). */
  readonly agent: string;
  readonly input: Readable;
  readonly output: Writable;
  readonly version: string;
  /**
   * The environment the agent CLI gave `musubi mcp` (its own): the secrets in it, and in the config,
   * are masked in everything the agent sends.
   */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Default lease of the receive tool. */
  readonly leaseMs?: number;
}

/** The MCP server of one agent over the hub's bus, task registry and agent directory. */
export interface McpHub extends AsyncDisposable {
  /** Not started yet: `start()` it, then wait for `ended`. */
  readonly server: McpAgentServer;
  /** Closes the server, then the hub (task registry, bus, store). Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens `musubi mcp`: the hub without gateways and the MCP server of `agent` on `input`/`output`
 * (stdio inside the agent CLI). Rejects like `openHub`.
 */
export async function openMcpServer(options: OpenMcpServerOptions): Promise<McpHub> {
  const hub = await openHub(options);
  const server = new McpAgentServer({
    agent: options.agent,
    bus: withMaskedSends(hub.bus, new SecretMask(knownSecrets({ config: options.config, env: options.env }))),
    directory: new AgentDirectory({ bus: hub.bus, clock: options.clock }),
    tasks: hub.tasks,
    clock: options.clock,
    logger: options.logger,
    input: options.input,
    output: options.output,
    version: options.version,
    ...(options.leaseMs !== undefined && { leaseMs: options.leaseMs }),
  });
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= server.close().finally(() => hub.close()));
  return { server, close, [Symbol.asyncDispose]: close };
}
