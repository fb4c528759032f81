import type { Socket } from 'node:net';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { pyJson } from '../../core/python/json-dumps.js';
import { errorDoc } from './result-doc.js';
import type { ReplyDoc } from './agent-endpoint.js';
import { CONNECTION_ERROR_PREFIX, parseAgentRequest, type AgentRequest } from './agent-request.js';
import { readRequest } from './request-reader.js';
import { UnixSocketServer } from './unix-socket-listener.js';

/** Largest request accepted (spec yadon.md 2.3). */
const MAX_REQUEST_BYTES = 64 * 1024 * 1024;
/** Request inactivity timeout (spec yadon.md 2.5). */
export const REQUEST_INACTIVITY_MS = 600_000;
/** After an oversize reply, how long unread request bytes are drained before the connection is cut. */
const DRAIN_AFTER_REPLY_MS = 10_000;
/** How long stop() lets in-flight replies finish before closing connections hard. */
const STOP_GRACE_MS = 2_000;

/** What a socket server answers requests with. */
export interface RequestHandler {
  readonly name: string;
  handle(request: AgentRequest): Promise<ReplyDoc>;
}

/** Options of {@link AgentSocketServer}. */
export interface AgentSocketServerOptions {
  readonly path: string;
  readonly handler: RequestHandler;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly maxRequestBytes?: number;
  readonly inactivityMs?: number;
}

/**
 * One agent socket (spec yadon.md 2.3): every connection is served on its own — read to the client's
 * half-close, parse, answer exactly one JSON document, close. Bad input gets the error replies of
 * section 5; a client that has gone away is ignored. `start()` binds (see UnixSocketServer);
 * `close()` stops accepting, unlinks the path if still ours, and ends connections after a short grace.
 */
export class AgentSocketServer {
  readonly #o: AgentSocketServerOptions;
  readonly #server: UnixSocketServer;

  constructor(options: AgentSocketServerOptions) {
    this.#o = options;
    this.#server = new UnixSocketServer({
      path: options.path,
      serve: (socket) => void this.#answer(socket),
      graceMs: STOP_GRACE_MS,
    });
  }

  /** Binds the socket; rejects with GATEWAY_ADDRESS_IN_USE or GATEWAY_UNAVAILABLE. */
  start(): Promise<void> {
    return this.#server.start();
  }

  close(): Promise<void> {
    return this.#server.close();
  }

  async #answer(socket: Socket): Promise<void> {
    const name = this.#o.handler.name;
    const read = await readRequest(socket, {
      maxBytes: this.#o.maxRequestBytes ?? MAX_REQUEST_BYTES,
      inactivityMs: this.#o.inactivityMs ?? REQUEST_INACTIVITY_MS,
      clock: this.#o.clock,
    });
    let reply: ReplyDoc;
    switch (read.kind) {
      case 'closed':
        socket.destroy();
        return;
      case 'too-large':
        reply = errorDoc(name, `${CONNECTION_ERROR_PREFIX}message too large`);
        break;
      case 'timed-out':
        reply = errorDoc(name, `${CONNECTION_ERROR_PREFIX}timed out`);
        break;
      case 'body': {
        const parsed = parseAgentRequest(read.bytes);
        reply = parsed.ok ? await this.#o.handler.handle(parsed.request) : errorDoc(name, parsed.message);
      }
    }
    this.#reply(socket, reply, read.kind === 'body');
  }

  #reply(socket: Socket, reply: ReplyDoc, hasReadAll: boolean): void {
    if (socket.destroyed) return;
    const bytes = Buffer.from(pyJson(reply, { nonFinite: 'null' }), 'utf8');
    if (hasReadAll) {
      socket.end(bytes, () => socket.destroy());
      return;
    }
    // The client may still be sending: keep draining until it half-closes (or a guard passes), so
    // closing does not reset the connection before the reply has been read.
    let isFlushed = false;
    let isDrained = false;
    const finish = (): void => {
      if (isFlushed && isDrained) socket.destroy();
    };
    const guard = this.#o.clock.setTimer(() => ((isDrained = true), finish()), DRAIN_AFTER_REPLY_MS);
    socket.once('end', () => (guard.cancel(), (isDrained = true), finish()));
    socket.once('close', () => guard.cancel());
    socket.resume();
    socket.end(bytes, () => ((isFlushed = true), finish()));
  }
}
