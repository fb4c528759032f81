import type { Readable, Writable } from 'node:stream';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Clock } from '../../core/clock.js';
import { MusubiError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { assertMailboxName } from '../../core/names.js';
import { AgentPresence, type AgentStatusWriter } from './agent-presence.js';
import { DrainingTransport } from './draining-transport.js';
import type { McpAgentList, McpBus, McpTaskList } from './mcp-tool-context.js';
import { registerTools } from './register-tools.js';
import { StdioTransport } from './stdio-transport.js';

/** Lease of a `receive` that names none: long, because one model turn on a message can take minutes. */
export const DEFAULT_MCP_LEASE_MS = 600_000;

/** How long a stopping server waits for running calls to answer before it closes the transport. */
export const DRAIN_TIMEOUT_MS = 5_000;

/** Collaborators and settings of {@link McpAgentServer}. */
export interface McpAgentServerOptions {
  /** The agent this server acts for: sender of what it sends, owner of the mailbox it receives from. */
  readonly agent: string;
  readonly bus: McpBus;
  /** The agent directory: read by `status` and `broadcast`, written with this agent's state. */
  readonly directory: McpAgentList & AgentStatusWriter;
  readonly tasks: McpTaskList;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The MCP channel: newline-delimited JSON-RPC in on `input`, out on `output` (nothing else may write there). */
  readonly input: Readable;
  readonly output: Writable;
  /** Reported to the client as the server version. */
  readonly version: string;
  /** Default lease of `receive`; {@link DEFAULT_MCP_LEASE_MS} unless given. */
  readonly leaseMs?: number;
}

function instructions(agent: string): string {
  return `You are agent "${agent}" on a musubi message bus shared with other AI agents and humans.
Your mailbox is "${agent}". Typical loop: receive -> do the work -> ack the deliveryId (unacked messages come back after their lease) -> send or say the result.
Use status to see who is on the team, peek to look at a mailbox without taking anything, tasks to see tracked background work.`;
}

/**
 * The musubi MCP server for one agent over stdio: the tools send, broadcast, receive, ack, peek,
 * status, tasks and say (see docs/mcp.md). `start()` registers the agent in the directory (protocol
 * `mcp`) and starts reading `input`; {@link McpAgentServer.ended} resolves when the client goes away
 * (input ends or closes, output fails, or the transport closes). `close()` aborts waiting receives,
 * lets running calls answer (at most {@link DRAIN_TIMEOUT_MS}), closes the transport and marks the agent `offline`; it is idempotent and
 * runs every step even if one fails (rejecting with an AggregateError). The bus is the caller's to close.
 */
export class McpAgentServer implements AsyncDisposable {
  readonly #options: McpAgentServerOptions;
  readonly #log: Logger;
  readonly #controller = new AbortController();
  readonly #presence: AgentPresence;
  readonly #mcp: McpServer;
  readonly #ended: Promise<void>;
  #transport: DrainingTransport | undefined;
  #end: () => void = () => undefined;
  #closing: Promise<void> | undefined;

  constructor(options: McpAgentServerOptions) {
    const agent = assertMailboxName(options.agent);
    this.#options = options;
    this.#log = options.logger.child({ component: 'gateway.mcp', agentId: agent });
    this.#ended = new Promise((resolve) => (this.#end = resolve));
    this.#presence = new AgentPresence({
      agent,
      directory: options.directory,
      clock: options.clock,
      logger: this.#log,
    });
    this.#mcp = new McpServer(
      { name: 'musubi', version: options.version },
      { instructions: instructions(agent) },
    );
    registerTools(this.#mcp, {
      agent,
      bus: options.bus,
      agents: options.directory,
      tasks: options.tasks,
      presence: this.#presence,
      clock: options.clock,
      logger: this.#log,
      signal: this.#controller.signal,
      leaseMs: options.leaseMs ?? DEFAULT_MCP_LEASE_MS,
    });
  }

  /** Resolves when the client has gone away or {@link McpAgentServer.close} was called. Never rejects. */
  get ended(): Promise<void> {
    return this.#ended;
  }

  /** Registers the agent and starts serving. Rejects (with the directory's error) when registration fails. */
  async start(): Promise<void> {
    if (this.#closing !== undefined) throw new MusubiError('GATEWAY_UNAVAILABLE', 'the MCP server is closed');
    const { input, output } = this.#options;
    await this.#presence.online();
    input.once('end', this.#onGone);
    input.once('close', this.#onGone);
    output.on('error', this.#onOutputError);
    this.#mcp.server.onclose = this.#onGone;
    this.#mcp.server.onerror = (err) => this.#log.warn({ err }, 'MCP transport error');
    this.#transport = new DrainingTransport(new StdioTransport({ input, output }), this.#options.clock);
    await this.#mcp.connect(this.#transport);
    this.#log.info('MCP server serving on stdio');
  }

  /** Stops serving; see the class comment. */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  readonly #onGone = (): void => this.#end();

  readonly #onOutputError = (err: Error): void => {
    // EPIPE and friends: the client stopped reading, so nobody can get an answer any more.
    this.#log.warn({ err }, 'MCP output failed');
    this.#end();
  };

  async #shutdown(): Promise<void> {
    const { input, output } = this.#options;
    this.#end();
    this.#controller.abort(new MusubiError('ABORTED', 'the MCP server is shutting down'));
    const failures: unknown[] = [];
    await this.#transport?.drained(DRAIN_TIMEOUT_MS);
    try {
      await this.#mcp.close();
    } catch (err) {
      failures.push(err);
    }
    input.off('end', this.#onGone);
    input.off('close', this.#onGone);
    output.off('error', this.#onOutputError);
    await this.#presence.offline();
    this.#log.info('MCP server stopped');
    if (failures.length > 0) throw new AggregateError(failures, 'MCP server close failed');
  }
}
