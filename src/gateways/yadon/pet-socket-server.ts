import { createServer, type Server, type Socket } from 'node:net';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { BubbleSink } from './bubble-text.js';
import { MAX_PET_MESSAGE_BYTES, parsePetMessage } from './pet-message.js';
import { readRequest } from './request-reader.js';
import { REQUEST_INACTIVITY_MS } from './agent-socket-server.js';
import { listenUnixSocket, type UnixSocketListener } from './unix-socket-listener.js';

/** Options of {@link PetSocketServer}. */
export interface PetSocketServerOptions {
  readonly path: string;
  /** The pet: `yadoran` or a bare worker number. */
  readonly pet: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly onBubble: BubbleSink;
}

/**
 * One pet socket (spec yadon.md 2.4): reads a bubble message to end of stream (at most 64 KiB; more
 * is dropped), shows it through `onBubble`, and never writes a byte back. Connections are served
 * concurrently; bad input is dropped silently.
 */
export class PetSocketServer {
  readonly #o: PetSocketServerOptions;
  readonly #server: Server;
  readonly #connections = new Set<Socket>();
  #listener: UnixSocketListener | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: PetSocketServerOptions) {
    this.#o = options;
    this.#server = createServer({ allowHalfOpen: true }, (socket) => this.#serve(socket));
  }

  /** Binds the socket; rejects with GATEWAY_ADDRESS_IN_USE or GATEWAY_UNAVAILABLE. */
  async start(): Promise<void> {
    this.#listener = await listenUnixSocket(this.#server, this.#o.path);
  }

  /** Stops accepting, unlinks the path if still ours and drops open connections. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const closed = this.#listener?.close();
      for (const socket of this.#connections) socket.destroy();
      await closed;
    })();
    return this.#closing;
  }

  #serve(socket: Socket): void {
    if (this.#closing !== undefined) {
      socket.destroy();
      return;
    }
    this.#connections.add(socket);
    socket.once('close', () => this.#connections.delete(socket));
    socket.on('error', () => undefined); // a pet client that vanished is of no concern
    void readRequest(socket, {
      maxBytes: MAX_PET_MESSAGE_BYTES,
      inactivityMs: REQUEST_INACTIVITY_MS,
      clock: this.#o.clock,
    }).then((read) => {
      socket.destroy();
      if (read.kind !== 'body') return;
      const message = parsePetMessage(read.bytes);
      if (message === undefined) {
        this.#o.logger.debug({ pet: this.#o.pet }, 'pet message dropped');
        return;
      }
      this.#o.onBubble({ pet: this.#o.pet, ...message });
    });
  }
}
