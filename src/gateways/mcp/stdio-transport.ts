import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/sdk/types.js';
import { MusubiError } from '../../core/errors.js';
import { decodeLine, rejectLongLine, type DecodedLine } from './json-rpc-line.js';
import { LINE_TOO_LONG, LineFramer } from './line-framer.js';

/** The longest line of MCP over stdio accepted: 10 MiB, the limit of the SDK's own stdio transport. */
const MAX_MCP_LINE_BYTES = 10 * 1024 * 1024;

/** Streams and settings of {@link StdioTransport}. */
export interface StdioTransportOptions {
  /** Newline-delimited JSON-RPC from the client; the caller owns it (it is paused, never destroyed). */
  readonly input: Readable;
  /** Where messages and error replies go; nothing else may write there. The caller owns it. */
  readonly output: Writable;
  /** Longest accepted line in bytes, without its `\n`; {@link MAX_MCP_LINE_BYTES} unless given. */
  readonly maxLineBytes?: number;
}

/**
 * The server side of MCP over stdio (newline-delimited JSON-RPC), in place of the SDK's
 * StdioServerTransport, which closes itself on a line over 10 MiB and drops bad lines without a word.
 * Here a bad line never ends the session: a line over `maxLineBytes` is skipped up to its `\n` without
 * being buffered, and it, a line that is not JSON, a batch or an invalid message each get a JSON-RPC
 * error reply (id null unless the request's own id could be read) and are reported through `onerror`
 * as GATEWAY_FRAME_TOO_LARGE or GATEWAY_FRAME_INVALID. Writes respect backpressure: `send` resolves
 * once `output` took the message or drained, and reading `input` pauses while `output` is full.
 * `close()` removes every listener it added, pauses `input` if nothing else reads it, and calls
 * `onclose`; it is idempotent. A send after close, or with `output` no longer writable, rejects with
 * GATEWAY_UNAVAILABLE.
 */
export class StdioTransport implements Transport {
  readonly #input: Readable;
  readonly #output: Writable;
  readonly #maxLineBytes: number;
  readonly #framer: LineFramer;
  #isStarted = false;
  #isClosed = false;
  #drain: { promise: Promise<void>; settle: (err?: Error) => void } | undefined;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  constructor(options: StdioTransportOptions) {
    this.#input = options.input;
    this.#output = options.output;
    this.#maxLineBytes = options.maxLineBytes ?? MAX_MCP_LINE_BYTES;
    this.#framer = new LineFramer({ maxLineBytes: this.#maxLineBytes });
  }

  /** Starts reading `input`. Rejects with INTERNAL when called twice or after close. */
  start(): Promise<void> {
    if (this.#isStarted || this.#isClosed)
      return Promise.reject(new MusubiError('INTERNAL', 'the stdio transport was already started'));
    this.#isStarted = true;
    this.#input.on('data', this.#onData);
    this.#input.on('error', this.#onInputError);
    return Promise.resolve();
  }

  /** Writes one message as a line; see the class comment. */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.#isClosed)
      return Promise.reject(new MusubiError('GATEWAY_UNAVAILABLE', 'the stdio transport is closed'));
    return this.#write(message);
  }

  /** Stops reading; see the class comment. */
  close(): Promise<void> {
    if (this.#isClosed) return Promise.resolve();
    this.#isClosed = true;
    this.#input.off('data', this.#onData);
    this.#input.off('error', this.#onInputError);
    // Only pause input nobody else reads: pausing stops every 'data' listener, not just ours.
    if (this.#input.listenerCount('data') === 0) this.#input.pause();
    // What waited for drain is already queued in the stream, so it is as sent as it will ever be.
    this.#drain?.settle();
    this.onclose?.();
    return Promise.resolve();
  }

  readonly #onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    for (const frame of this.#framer.push(bytes)) {
      if (this.#isClosed) return;
      this.#handle(frame === LINE_TOO_LONG ? rejectLongLine(this.#maxLineBytes) : decodeLine(frame));
    }
  };

  readonly #onInputError = (err: Error): void => this.onerror?.(err);

  #handle(line: DecodedLine): void {
    if (line.kind === 'blank') return;
    if (line.kind === 'rejected') {
      this.#write(line.reply).catch((err: unknown) => this.#report(err));
      this.onerror?.(line.error);
      return;
    }
    try {
      this.onmessage?.(line.message);
    } catch (err) {
      // A throwing handler inside a 'data' listener would take the whole process down.
      this.#report(err);
    }
  }

  #report(err: unknown): void {
    this.onerror?.(err instanceof Error ? err : new MusubiError('INTERNAL', String(err)));
  }

  #write(message: object): Promise<void> {
    if (!this.#output.writable)
      return Promise.reject(new MusubiError('GATEWAY_UNAVAILABLE', 'the MCP output is no longer writable'));
    if (this.#output.write(`${JSON.stringify(message)}\n`)) return Promise.resolve();
    return this.#waitForDrain();
  }

  /**
   * One wait shared by every write that found `output` full (one set of listeners, however many
   * sends are queued); input is paused meanwhile so a client that floods us without reading cannot
   * make the output buffer grow without bound.
   */
  #waitForDrain(): Promise<void> {
    if (this.#drain !== undefined) return this.#drain.promise;
    const output = this.#output;
    // Before start nothing reads input, and resuming it then would lose what it carries.
    const isPausing = this.#isStarted && !this.#isClosed;
    let settle: (err?: Error) => void = () => undefined;
    const promise = new Promise<void>((resolve, reject) => {
      const onDrain = (): void => settle();
      const onClose = (): void => settle(new MusubiError('GATEWAY_UNAVAILABLE', 'the MCP output closed'));
      const onError = (err: Error): void => settle(err);
      settle = (err) => {
        output.off('drain', onDrain);
        output.off('close', onClose);
        output.off('error', onError);
        this.#drain = undefined;
        if (isPausing && !this.#isClosed) this.#input.resume();
        if (err === undefined) resolve();
        else reject(err);
      };
      output.on('drain', onDrain);
      output.on('close', onClose);
      output.on('error', onError);
    });
    this.#drain = { promise, settle };
    if (isPausing) this.#input.pause();
    return promise;
  }
}
