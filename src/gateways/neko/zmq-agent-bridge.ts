import * as zmq from 'zeromq';
import type { Clock, Timer } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { NekoZmqPorts } from './neko-settings.js';
import type { NekoEvent } from './neko-wire.js';

/** LINGER while open (spec 2.1); 0 at close. */
const OPEN_LINGER_MS = 1_000;
/** Hard cap libzmq enforces per inbound message (a larger one drops the connection). */
const ZMQ_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Which socket a frame came in on. */
export type FrameSource = 'session' | 'analyze';

/** Settings of {@link ZmqAgentBridge}. */
export interface ZmqAgentBridgeOptions {
  readonly host: string;
  readonly ports: NekoZmqPorts;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Called for every single-part frame, in arrival order per socket. Must not throw. */
  readonly onFrame: (frame: Buffer, source: FrameSource) => void;
  /** `agent_bridge_heartbeat` interval; 0 = none. */
  readonly heartbeatMs?: number;
  readonly pid?: number;
}

/**
 * The agent side of the N.E.K.O. bridge: SUB (subscribed to everything) and PULL connected to main's
 * session and analyze sockets, PUSH connected to main's agent socket. Either side may start first;
 * the connected PUSH queues up to the high-water mark while main is down. Sends never block: a send
 * that would block resolves false and the message is dropped.
 */
export class ZmqAgentBridge {
  readonly #o: ZmqAgentBridgeOptions;
  readonly #sub = new zmq.Subscriber({ linger: OPEN_LINGER_MS, maxMessageSize: ZMQ_MAX_MESSAGE_BYTES });
  readonly #pull = new zmq.Pull({ linger: OPEN_LINGER_MS, maxMessageSize: ZMQ_MAX_MESSAGE_BYTES });
  readonly #push = new zmq.Push({ linger: OPEN_LINGER_MS, sendTimeout: 0 });
  readonly #loops: Promise<void>[] = [];
  #heartbeat: Timer | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: ZmqAgentBridgeOptions) {
    this.#o = options;
  }

  /** Connects the three sockets and starts receiving. */
  start(): void {
    const at = (port: number): string => `tcp://${this.#o.host}:${port}`;
    this.#sub.connect(at(this.#o.ports.sessionPub));
    this.#sub.subscribe();
    this.#pull.connect(at(this.#o.ports.analyzePush));
    this.#push.connect(at(this.#o.ports.agentPush));
    this.#loops.push(this.#receive(this.#sub, 'session'), this.#receive(this.#pull, 'analyze'));
    this.#beat();
  }

  /** Sends one event as one JSON frame; false when it would block or the bridge is closed. */
  async send(event: NekoEvent): Promise<boolean> {
    if (this.#closing !== undefined || this.#push.closed) return false;
    try {
      await this.#push.send(JSON.stringify(event));
      return true;
    } catch (err) {
      this.#o.logger.debug({ err, eventType: event.event_type }, 'event dropped: send would block');
      return false;
    }
  }

  /** Stops the heartbeat, closes the sockets with LINGER 0 and waits for the receive loops. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#heartbeat?.cancel();
      for (const socket of [this.#sub, this.#pull, this.#push]) {
        socket.linger = 0;
        socket.close();
      }
      await Promise.allSettled(this.#loops);
    })();
    return this.#closing;
  }

  #beat(): void {
    const everyMs = this.#o.heartbeatMs ?? 0;
    if (everyMs <= 0 || this.#closing !== undefined) return;
    this.#heartbeat = this.#o.clock.setTimer(() => {
      void this.send({
        event_type: 'agent_bridge_heartbeat',
        lanlan_name: null,
        pid: this.#o.pid ?? process.pid,
      });
      this.#beat();
    }, everyMs);
  }

  async #receive(socket: zmq.Subscriber | zmq.Pull, source: FrameSource): Promise<void> {
    try {
      for await (const parts of socket) {
        const [frame] = parts;
        if (parts.length !== 1 || frame === undefined) {
          this.#o.logger.debug({ source, parts: parts.length }, 'multipart frame ignored');
          continue;
        }
        this.#o.onFrame(frame, source);
      }
    } catch (err) {
      // A receive pending at close() rejects (EAGAIN); anything else is worth a line in the log.
      if (this.#closing === undefined) this.#o.logger.warn({ err, source }, 'receive loop ended');
    }
  }
}
