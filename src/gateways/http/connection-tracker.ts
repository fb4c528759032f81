import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Knows which sockets of an HTTP server have a request in flight, so a stop can drop every other one at
 * once. Node's `server.close()` only drops keep-alive sockets that served a request; a socket a client
 * opened but has not used yet (fetch opens spare ones) would hold the close open until the client
 * gives up on it. Requests in flight finish; their sockets are dropped as they end.
 */
export class ConnectionTracker {
  readonly #inFlight = new Map<Socket, number>();
  readonly #server: Server;
  #isDraining = false;

  constructor(server: Server) {
    this.#server = server;
    server.on('connection', this.#onConnection);
    server.on('request', this.#onRequest);
  }

  /** Drops idle sockets now and every other one when its last request ends. Idempotent. */
  drain(): void {
    this.#isDraining = true;
    for (const [socket, count] of this.#inFlight) if (count === 0) socket.destroy();
  }

  /** Drops every socket, in flight or not (the end of a stop's grace period). */
  destroyAll(): void {
    for (const socket of this.#inFlight.keys()) socket.destroy();
  }

  /** Removes the listeners this tracker added. */
  detach(): void {
    this.#server.off('connection', this.#onConnection);
    this.#server.off('request', this.#onRequest);
  }

  readonly #onConnection = (socket: Socket): void => {
    if (this.#isDraining) {
      socket.destroy();
      return;
    }
    this.#inFlight.set(socket, 0);
    socket.once('close', () => this.#inFlight.delete(socket));
  };

  readonly #onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const socket = req.socket;
    this.#inFlight.set(socket, (this.#inFlight.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (this.#inFlight.get(socket) ?? 1) - 1;
      if (!this.#inFlight.has(socket)) return;
      this.#inFlight.set(socket, left);
      if (left === 0 && this.#isDraining) socket.destroy();
    });
  };
}
