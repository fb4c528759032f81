import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CancelledNotificationSchema,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { Clock } from '../../core/clock.js';

/**
 * A transport decorator that knows which client requests still await an answer, so a stopping server
 * can send every answer before it closes (stdin may end while calls are still running, as with
 * `echo '...' | musubi mcp`). A request counts as answered once its response or error was written, or
 * when the client cancels it (the SDK then sends nothing).
 */
export class DrainingTransport implements Transport {
  readonly #inner: Transport;
  readonly #clock: Clock;
  readonly #pending = new Set<RequestId>();
  readonly #waiters = new Set<() => void>();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  constructor(inner: Transport, clock: Clock) {
    this.#inner = inner;
    this.#clock = clock;
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => {
      this.#observeIncoming(message);
      this.onmessage?.(message, extra);
    };
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    try {
      await this.#inner.send(message, options);
    } finally {
      if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) this.#answered(message.id);
    }
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  /** Resolves when no request awaits an answer, or after `timeoutMs` at the latest. Never rejects. */
  drained(timeoutMs: number): Promise<void> {
    if (this.#pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        timer.cancel();
        this.#waiters.delete(done);
        resolve();
      };
      const timer = this.#clock.setTimer(done, timeoutMs);
      this.#waiters.add(done);
    });
  }

  #observeIncoming(message: JSONRPCMessage): void {
    if (isJSONRPCRequest(message)) {
      this.#pending.add(message.id);
      return;
    }
    const cancelled = CancelledNotificationSchema.safeParse(message);
    if (cancelled.success && cancelled.data.params.requestId !== undefined)
      this.#answered(cancelled.data.params.requestId);
  }

  #answered(id: RequestId | undefined): void {
    if (id === undefined || !this.#pending.delete(id) || this.#pending.size > 0) return;
    for (const waiter of [...this.#waiters]) waiter();
  }
}
