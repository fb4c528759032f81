import type { Socket } from 'node:net';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { BubbleSink } from './bubble-text.js';
import { MAX_PET_MESSAGE_BYTES, parsePetMessage } from './pet-message.js';
import { readRequest } from './request-reader.js';
import { REQUEST_INACTIVITY_MS } from './agent-socket-server.js';
import { UnixSocketServer } from './unix-socket-listener.js';

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
  readonly #server: UnixSocketServer;

  constructor(options: PetSocketServerOptions) {
    this.#o = options;
    this.#server = new UnixSocketServer({ path: options.path, serve: (socket) => this.#serve(socket) });
  }

  /** Binds the socket; rejects with GATEWAY_ADDRESS_IN_USE or GATEWAY_UNAVAILABLE. */
  start(): Promise<void> {
    return this.#server.start();
  }

  /** Stops accepting, unlinks the path if still ours and drops open connections. Idempotent. */
  close(): Promise<void> {
    return this.#server.close();
  }

  #serve(socket: Socket): void {
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
