import { randomUUID } from 'node:crypto';
import * as zmq from 'zeromq';
import { createSystemClock, type Clock } from '../../core/clock.js';
import { MusubiError } from '../../core/errors.js';
import { DEFAULT_MAX_FRAME_BYTES } from './neko-frames.js';
import type { NekoZmqPorts } from './neko-settings.js';
import type { NekoEvent } from './neko-wire.js';

/** Options of {@link ZmqMainBridge.publishAnalyzeRequest} (spec 2.2). */
export interface PublishAnalyzeOptions {
  readonly conversationId?: string;
  readonly externalIntent?: number;
  readonly proactive?: boolean;
  readonly language?: string;
  readonly ackTimeoutMs?: number;
  readonly retries?: number;
  /** Called with the event id before the first send. */
  readonly onEventId?: (eventId: string) => void;
}

/** Settings of {@link ZmqMainBridge.bind}. */
export interface ZmqMainBridgeOptions {
  readonly host?: string;
  /** Ports to bind; 0 or absent = OS-chosen (read them from `ports`). */
  readonly ports?: Partial<NekoZmqPorts>;
  readonly clock?: Clock;
  readonly maxFrameBytes?: number;
}

const frameSchemaCheck = (value: unknown): value is NekoEvent =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  typeof Reflect.get(value, 'event_type') === 'string';

/** Binds `socket` on host:port (`*` for 0); GATEWAY_ADDRESS_IN_USE when taken. Resolves the port bound. */
async function bindPort(socket: zmq.Socket, host: string, port: number | undefined): Promise<number> {
  try {
    await socket.bind(`tcp://${host}:${port === undefined || port === 0 ? '*' : port}`);
  } catch (err) {
    const code = err instanceof Error && 'code' in err ? String(err.code) : '';
    throw new MusubiError(
      code === 'EADDRINUSE' ? 'GATEWAY_ADDRESS_IN_USE' : 'GATEWAY_UNAVAILABLE',
      `cannot bind tcp://${host}:${port ?? 0}: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );
  }
  return Number(/:(\d+)$/.exec(socket.lastEndpoint ?? '')?.[1] ?? port ?? 0);
}

/**
 * The main side of the N.E.K.O. bridge (what N.E.K.O.'s main server does), for tests, the benchmark and
 * `musubi neko analyze`: binds PUB (session), PUSH (analyze) and PULL (agent events) on 127.0.0.1 and
 * implements the reliable analyze publish of spec 2.2.
 */
export class ZmqMainBridge {
  readonly ports: NekoZmqPorts;
  readonly #pub: zmq.Publisher;
  readonly #push: zmq.Push;
  readonly #pull: zmq.Pull;
  readonly #clock: Clock;
  readonly #maxFrameBytes: number;
  readonly #listeners = new Set<(event: NekoEvent) => void>();
  readonly #waiters = new Map<string, (isAcked: boolean) => void>();
  readonly #pings = new Set<string>();
  readonly #loop: Promise<void>;
  #closing: Promise<void> | undefined;

  private constructor(
    sockets: { pub: zmq.Publisher; push: zmq.Push; pull: zmq.Pull },
    ports: NekoZmqPorts,
    options: ZmqMainBridgeOptions,
  ) {
    this.#pub = sockets.pub;
    this.#push = sockets.push;
    this.#pull = sockets.pull;
    this.ports = ports;
    this.#clock = options.clock ?? createSystemClock();
    this.#maxFrameBytes = options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.#loop = this.#receive();
  }

  /** Binds the three sockets; closes whatever it bound when one fails. */
  static async bind(options: ZmqMainBridgeOptions = {}): Promise<ZmqMainBridge> {
    const host = options.host ?? '127.0.0.1';
    const pub = new zmq.Publisher({ linger: 0, sendTimeout: 0 });
    const push = new zmq.Push({ linger: 0, sendTimeout: 0 });
    const pull = new zmq.Pull({ linger: 0 });
    try {
      const ports: NekoZmqPorts = {
        sessionPub: await bindPort(pub, host, options.ports?.sessionPub),
        analyzePush: await bindPort(push, host, options.ports?.analyzePush),
        agentPush: await bindPort(pull, host, options.ports?.agentPush),
      };
      return new ZmqMainBridge({ pub, push, pull }, ports, options);
    } catch (err) {
      for (const socket of [pub, push, pull]) socket.close();
      throw err;
    }
  }

  /** Every event the agent server sends, in order; returns the unsubscribe function. */
  onEvent(listener: (event: NekoEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /**
   * Spec 2.2: one `event_id` for every attempt; each attempt sends on the analyze socket and waits
   * `ackTimeoutMs` for the matching `analyze_ack`. Resolves true on an ack, false when every attempt
   * (1 + `retries`) went unanswered or the bridge is closed. A late ack is ignored.
   */
  async publishAnalyzeRequest(
    sessionKey: string,
    trigger: string,
    messages: readonly unknown[],
    options: PublishAnalyzeOptions = {},
  ): Promise<boolean> {
    if (this.#closing !== undefined) return false;
    const eventId = randomUUID().replaceAll('-', '');
    options.onEventId?.(eventId);
    const frame = JSON.stringify({
      event_type: 'analyze_request',
      event_id: eventId,
      trigger,
      lanlan_name: sessionKey,
      messages,
      ...(options.conversationId !== undefined && { conversation_id: options.conversationId }),
      ...(options.externalIntent !== undefined && { external_intent: options.externalIntent }),
      ...(options.proactive === true && { proactive: true }),
      ...(options.language !== undefined && { language: options.language }),
    });
    const attempts = 1 + (options.retries ?? 1);
    for (let attempt = 0; attempt < attempts; attempt++) {
      let settle: (isAcked: boolean) => void = () => undefined;
      const acked = new Promise<boolean>((resolve) => (settle = resolve));
      this.#waiters.set(eventId, settle);
      if (!(await this.#sendOn(this.#push, frame))) {
        this.#waiters.delete(eventId);
        continue;
      }
      let timer: { cancel(): void } | undefined;
      const timedOut = new Promise<boolean>(
        (resolve) => (timer = this.#clock.setTimer(() => resolve(false), options.ackTimeoutMs ?? 800)),
      );
      const isAcked = await Promise.race([acked, timedOut]);
      timer?.cancel();
      this.#waiters.delete(eventId);
      if (isAcked) return true;
    }
    return false;
  }

  /**
   * Waits until an agent server answers on both pipes: sends `{"event_type": "analyze_request",
   * "event_id": <ping id>}` (no `messages`: a conformant server acks it and does nothing else) every 50 ms
   * until the ack arrives. Ping acks are not passed to listeners. Resolves false after `timeoutMs`.
   */
  async waitForAgent(timeoutMs = 5_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    const pingId = `ping${randomUUID().replaceAll('-', '')}`;
    this.#pings.add(pingId);
    try {
      while (Date.now() < deadline && this.#closing === undefined) {
        let settle: (isAcked: boolean) => void = () => undefined;
        const acked = new Promise<boolean>((resolve) => (settle = resolve));
        this.#waiters.set(pingId, settle);
        await this.#sendOn(this.#push, JSON.stringify({ event_type: 'analyze_request', event_id: pingId }));
        let timer: { cancel(): void } | undefined;
        const retry = new Promise<boolean>(
          (resolve) => (timer = this.#clock.setTimer(() => resolve(false), 50)),
        );
        const isAcked = await Promise.race([acked, retry]);
        timer?.cancel();
        if (isAcked) return true;
      }
      return false;
    } finally {
      this.#waiters.delete(pingId);
    }
  }

  /** Publishes a session event (best effort) on the PUB socket. */
  publishSessionEvent(event: Record<string, unknown>): Promise<boolean> {
    return this.#sendOn(this.#pub, JSON.stringify(event));
  }

  /** Sends raw bytes on the analyze (PUSH) or session (PUB) socket, for malformed-frame tests. */
  sendRaw(socket: 'analyze' | 'session', frame: Buffer | string): Promise<boolean> {
    return this.#sendOn(socket === 'analyze' ? this.#push : this.#pub, frame);
  }

  /** Closes the sockets (LINGER 0) and ends the receive loop. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const settle of this.#waiters.values()) settle(false);
      this.#waiters.clear();
      for (const socket of [this.#pub, this.#push, this.#pull]) socket.close();
      await this.#loop.catch(() => undefined);
      this.#listeners.clear();
    })();
    return this.#closing;
  }

  async #sendOn(socket: zmq.Push | zmq.Publisher, frame: Buffer | string): Promise<boolean> {
    if (this.#closing !== undefined) return false;
    try {
      await socket.send(frame);
      return true;
    } catch {
      // Would block (no peer, high-water mark): dropped, and the caller is told.
      return false;
    }
  }

  async #receive(): Promise<void> {
    try {
      for await (const [frame] of this.#pull) {
        if (frame === undefined || frame.byteLength > this.#maxFrameBytes) continue;
        let value: unknown;
        try {
          value = JSON.parse(frame.toString('utf8'));
        } catch {
          continue; // not JSON: ignored, as the spec asks of both sides
        }
        if (!frameSchemaCheck(value)) continue;
        if (value.event_type === 'analyze_ack') {
          const id = Reflect.get(value, 'event_id');
          if (typeof id === 'string') this.#waiters.get(id)?.(true);
          if (typeof id === 'string' && this.#pings.has(id)) continue;
        }
        for (const listener of this.#listeners) listener(value);
      }
    } catch {
      // A receive pending at close() rejects; the loop just ends.
    }
  }
}
