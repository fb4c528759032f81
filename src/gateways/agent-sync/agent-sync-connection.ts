import { isUtf8 } from 'node:buffer';
import type { Socket } from 'node:net';
import type { Logger } from '../../core/logger.js';
import { isJsonObject, parseJson } from '../../core/python/json-loads.js';
import type { AgentSyncProtocol } from './agent-sync-protocol.js';
import type { CommandOutcome } from './command-context.js';
import { NdjsonFramer, type Frame } from './ndjson-framer.js';
import { WireErrors, errorReply } from './replies.js';

/** Longest request line: content before the `\n`. */
export const MAX_REQUEST_LINE_BYTES = 65_536;
// Pause reading while this many complete lines wait (a client pipelining without reading replies).
const PAUSE_AT_FRAMES = 64;
const RESUME_AT_FRAMES = 8;
const CLOSE_GRACE_MS = 2_000;
/**
 * An HTTP request line or Host header: what a web page's request to this port starts with. No
 * agent_sync client sends it; a browser POSTing `text/plain` here (no CORS preflight) would otherwise
 * get its body lines run as commands, so such a connection is closed at once (as Redis does).
 */
const HTTP_LINE = /^(?:[A-Z]+ \S+ HTTP\/\d(?:\.\d)?|host:.*)$/i;

let nextTurn: Promise<void> | undefined;

/**
 * Resolves after the event loop has passed its next poll phase (two check phases from now). Callers in
 * the same phase share one wait; once the first check phase has come, a new caller starts its own, since
 * the shared one may end before another poll phase.
 */
function nextLoopTurn(): Promise<void> {
  nextTurn ??= new Promise((resolve) =>
    setImmediate(() => {
      nextTurn = undefined;
      setImmediate(resolve);
    }),
  );
  return nextTurn;
}

/**
 * One client connection: splits lines, runs them one after another through the core and writes the
 * replies in order. A listen's messages are removed only after its reply was accepted by the OS; a
 * listen on a half-closed or failed connection is cancelled without a reply and the connection closes.
 * `closed` resolves once the socket is closed.
 */
export class AgentSyncConnection {
  readonly closed: Promise<void>;
  readonly #socket: Socket;
  readonly #core: Promise<AgentSyncProtocol>;
  readonly #log: Logger;
  readonly #framer = new NdjsonFramer({ maxLineBytes: MAX_REQUEST_LINE_BYTES });
  readonly #frames: Frame[] = [];
  // Aborted when the client half-closes, the socket fails or the gateway stops: cancels parked listens.
  readonly #abort = new AbortController();
  #isPumping = false;
  #isEnded = false;
  #isClosed = false;
  #isFinishing = false;
  #closeTimer: NodeJS.Timeout | undefined;

  constructor(options: { socket: Socket; core: Promise<AgentSyncProtocol>; logger: Logger }) {
    this.#socket = options.socket;
    this.#core = options.core;
    this.#log = options.logger;
    this.closed = new Promise((resolve) => this.#socket.once('close', () => resolve()));
    this.#socket.setNoDelay(true);
    this.#socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    this.#socket.on('end', () => this.#onEnd());
    this.#socket.on('error', (err) => {
      this.#log.debug({ err }, 'connection error');
      this.#onClosed();
    });
    this.#socket.on('close', () => this.#onClosed());
  }

  /** Stops reading, lets the line in progress finish, cancels a parked listen, then ends the socket. */
  stop(): void {
    this.#finish();
  }

  /** Closes at once. */
  destroy(): void {
    this.#socket.destroy();
  }

  #onData(chunk: Buffer): void {
    if (this.#isFinishing) return;
    this.#frames.push(...this.#framer.push(chunk));
    if (this.#frames.length >= PAUSE_AT_FRAMES) this.#socket.pause();
    void this.#pump();
  }

  #onEnd(): void {
    this.#isEnded = true;
    this.#frames.push(...this.#framer.end());
    this.#abort.abort();
    void this.#pump();
  }

  #onClosed(): void {
    clearTimeout(this.#closeTimer);
    this.#isClosed = true;
    this.#frames.length = 0;
    this.#abort.abort();
  }

  /** Discards whatever is still queued and ends our side once the current line is done. */
  #finish(): void {
    this.#isFinishing = true;
    this.#frames.length = 0;
    this.#abort.abort();
    if (!this.#isPumping && !this.#isClosed) this.#socket.end();
  }

  async #pump(): Promise<void> {
    if (this.#isPumping) return;
    this.#isPumping = true;
    try {
      for (let frame = this.#frames.shift(); frame !== undefined; frame = this.#frames.shift()) {
        if (this.#frames.length <= RESUME_AT_FRAMES && this.#socket.isPaused()) this.#socket.resume();
        if (frame.kind === 'too-long') {
          await this.#write(errorReply(WireErrors.tooLong));
          this.#finish();
          // The client may still be sending the rest of the line: give it time to read the reply.
          this.#closeTimer = setTimeout(() => this.#socket.destroy(), CLOSE_GRACE_MS);
          this.#closeTimer.unref();
          break;
        }
        await this.#handleLine(frame.bytes);
        if (this.#isClosed || this.#isFinishing) break;
      }
    } catch (err) {
      this.#log.error({ err }, 'connection failed');
      this.#socket.destroy();
    } finally {
      this.#isPumping = false;
    }
    if (this.#isClosed) return;
    if (this.#isFinishing || (this.#isEnded && this.#frames.length === 0)) this.#socket.end();
  }

  async #handleLine(bytes: Buffer): Promise<void> {
    if (!isUtf8(bytes)) return this.#write(errorReply(WireErrors.invalidUtf8));
    const text = bytes.toString('utf8');
    const parsed = parseJson(text);
    if (!parsed.ok) {
      if (HTTP_LINE.test(text.trimEnd())) {
        this.#log.warn('an HTTP request reached the agent_sync port: connection closed');
        this.#frames.length = 0;
        this.#socket.destroy();
        return;
      }
      return this.#write(
        errorReply(parsed.isNumberOutOfRange === true ? WireErrors.numberOutOfRange : WireErrors.invalidJson),
      );
    }
    if (!isJsonObject(parsed.value)) return this.#write(errorReply(WireErrors.notAnObject));
    let core: AgentSyncProtocol;
    try {
      core = await this.#core;
    } catch (err) {
      return this.#write(errorReply(err instanceof Error ? err.message : String(err)));
    }
    const isListen = parsed.value.get('cmd') === 'listen';
    const outcome = await core.execute(parsed.value, this.#abort.signal);
    return isListen ? this.#answerListen(core, outcome) : this.#writeOutcome(outcome);
  }

  async #writeOutcome(outcome: CommandOutcome): Promise<void> {
    if (outcome.kind === 'reply') await this.#write(outcome.text);
  }

  /** Writes a listen reply only to a live client; its messages are committed once the OS took the bytes. */
  async #answerListen(core: AgentSyncProtocol, outcome: CommandOutcome): Promise<void> {
    const reservation = outcome.kind === 'reply' ? outcome.reservation : null;
    // An end of stream sent right behind the listen is read by libuv only in the next poll phase: let
    // one loop turn pass so such a listen is cancelled instead of answered (spec 4.5).
    if (outcome.kind === 'reply' && !this.#isEnded) await nextLoopTurn();
    if (outcome.kind === 'cancelled' || this.#isEnded || this.#isClosed || this.#isFinishing) {
      if (reservation !== null) void core.settle(reservation, false);
      this.#finish();
      return;
    }
    if (reservation === null) return this.#write(outcome.text);
    await new Promise<void>((resolve) => {
      this.#socket.write(`${outcome.text}\n`, (err) => {
        // Queued synchronously in the callback: later requests see the commit.
        void core.settle(reservation, err === undefined || err === null);
        resolve();
      });
    });
  }

  /** Writes one reply line, waiting for `drain` when the socket buffer is full. */
  async #write(text: string): Promise<void> {
    if (this.#isClosed) return;
    if (this.#socket.write(`${text}\n`)) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        this.#socket.off('drain', done);
        this.#socket.off('close', done);
        resolve();
      };
      this.#socket.on('drain', done);
      this.#socket.on('close', done);
    });
  }
}
