import { isUtf8 } from 'node:buffer';
import type { Socket } from 'node:net';
import type { Logger } from '../../core/logger.js';
import { isJsonObject, parseJson, type JsonObject } from '../../core/python/json-loads.js';
import type { AgentSyncProtocol } from './agent-sync-protocol.js';
import type { CommandOutcome } from './command-context.js';
import { LINE_TOO_LONG, NdjsonFramer, type Frame } from './ndjson-framer.js';
import type { Reservation } from './reservation.js';
import { WireErrors, errorReply } from './replies.js';

/** Longest request line: content before the `\n`. */
export const MAX_REQUEST_LINE_BYTES = 65_536;
// Pause reading while this many complete lines wait (a client pipelining without reading replies).
const PAUSE_AT_FRAMES = 64;
const RESUME_AT_FRAMES = 8;
const CLOSE_GRACE_MS = 2_000;
/** Why a connection's parked listens were cancelled (an abort reason that costs no stack trace). */
const CONNECTION_ENDED = 'connection ended';
/**
 * An HTTP request line or Host header: what a web page's request to this port starts with. No
 * agent_sync client sends it; a browser POSTing `text/plain` here (no CORS preflight) would otherwise
 * get its body lines run as commands, so such a connection is closed at once (as Redis does).
 */
const HTTP_LINE = /^(?:[A-Z]+ \S+ HTTP\/\d(?:\.\d)?|host:.*)$/i;

/**
 * Waits for the event loop to pass its next poll phase, one wait shared by every caller in the same
 * phase (one per gateway, handed to each connection).
 */
export class LoopTurns {
  #next: Promise<void> | undefined;

  /**
   * Resolves after the event loop has passed its next poll phase (two check phases from now). Callers
   * in the same phase share one wait; once the first check phase has come, a new caller starts its
   * own, since the shared one may end before another poll phase.
   */
  next(): Promise<void> {
    this.#next ??= new Promise((resolve) =>
      setImmediate(() => {
        this.#next = undefined;
        setImmediate(resolve);
      }),
    );
    return this.#next;
  }
}

/** What a line became: a request to run, or a reply to write at once (bad input), or nothing (closed). */
type LineRequest = JsonObject | { readonly reply: string } | null;

/**
 * One client connection: splits lines, runs them one after another through the core and writes the
 * replies in order. A listen's messages are removed only after its reply was accepted by the OS; a
 * listen on a half-closed or failed connection is cancelled without a reply and the connection closes.
 * `closed` resolves once the socket is closed.
 *
 * The lines run in one loop per burst of input (#pump); a reply that fits the socket buffer is written
 * without waiting, so a request costs its command's own promises and little else.
 */
export class AgentSyncConnection {
  readonly closed: Promise<void>;
  readonly #socket: Socket;
  readonly #core: Promise<AgentSyncProtocol>;
  /** The core once it has loaded (most requests need not wait for the promise). */
  #coreReady: AgentSyncProtocol | undefined;
  readonly #log: Logger;
  readonly #turns: LoopTurns;
  readonly #framer = new NdjsonFramer({ maxLineBytes: MAX_REQUEST_LINE_BYTES });
  readonly #frames: Frame[] = [];
  // Aborted when the client half-closes, the socket fails or the gateway stops: cancels parked listens.
  readonly #abort = new AbortController();
  /** The listen reply being written, to settle once the OS took it (or the write failed). */
  #written:
    | { readonly core: AgentSyncProtocol; readonly reservation: Reservation; wake: (() => void) | undefined }
    | undefined;
  /** What the running line is: a listen (answered after a loop turn), or another command. */
  #isListen = false;
  /** A listen's outcome waiting for its loop turn. */
  #turnOutcome: CommandOutcome | undefined;
  #isPumping = false;
  #isEnded = false;
  #isClosed = false;
  #isFinishing = false;
  #closeTimer: NodeJS.Timeout | undefined;

  constructor(options: {
    socket: Socket;
    core: Promise<AgentSyncProtocol>;
    logger: Logger;
    turns: LoopTurns;
  }) {
    this.#socket = options.socket;
    this.#core = options.core;
    this.#log = options.logger;
    this.#turns = options.turns;
    this.closed = new Promise((resolve) => this.#socket.once('close', () => resolve()));
    this.#core.then(
      (core) => (this.#coreReady = core),
      () => undefined, // each request that needs the core reports the failure itself
    );
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
    this.#framer.push(chunk, this.#frames);
    if (this.#frames.length >= PAUSE_AT_FRAMES) this.#socket.pause();
    this.#pump();
  }

  #onEnd(): void {
    this.#isEnded = true;
    this.#framer.end(this.#frames);
    this.#abort.abort(CONNECTION_ENDED);
    this.#pump();
  }

  #onClosed(): void {
    clearTimeout(this.#closeTimer);
    this.#isClosed = true;
    this.#frames.length = 0;
    this.#abort.abort(CONNECTION_ENDED);
  }

  /** Discards whatever is still queued and ends our side once the current line is done. */
  #finish(): void {
    this.#isFinishing = true;
    this.#frames.length = 0;
    this.#abort.abort(CONNECTION_ENDED);
    if (!this.#isPumping && !this.#isClosed) this.#socket.end();
  }

  /** Starts running the queued lines unless they are already running. */
  #pump(): void {
    if (this.#isPumping) return;
    this.#isPumping = true;
    this.#next();
  }

  /**
   * Runs queued lines one after another until one has to wait (a command, a full socket buffer): its
   * promise resumes the loop. No async frame per line: a line costs its command's promises.
   */
  #next(): void {
    try {
      for (;;) {
        if (this.#isClosed || this.#isFinishing) return this.#idle();
        const frame = this.#frames.shift();
        if (frame === undefined) return this.#idle();
        if (this.#frames.length <= RESUME_AT_FRAMES && this.#socket.isPaused()) this.#socket.resume();
        const waiting = this.#runLine(frame);
        if (waiting !== undefined) {
          waiting.then(this.#resume, this.#fail);
          return;
        }
      }
    } catch (err) {
      this.#fail(err);
    }
  }

  readonly #resume = (): void => this.#next();

  readonly #fail = (err: unknown): void => {
    this.#log.error({ err }, 'connection failed');
    this.#socket.destroy();
    this.#isPumping = false;
  };

  /** No line left to run (or the connection is going): ends our side when the client is done. */
  #idle(): void {
    this.#isPumping = false;
    if (this.#isClosed) return;
    if (this.#isFinishing || (this.#isEnded && this.#frames.length === 0)) this.#socket.end();
  }

  /** Runs one line; returns what it waits for, or undefined when it is done already. */
  #runLine(frame: Frame): Promise<unknown> | undefined {
    if (frame === LINE_TOO_LONG) {
      const writing = this.#write(errorReply(WireErrors.tooLong));
      this.#finish();
      // The client may still be sending the rest of the line: give it time to read the reply.
      this.#closeTimer = setTimeout(() => this.#socket.destroy(), CLOSE_GRACE_MS);
      this.#closeTimer.unref();
      return writing;
    }
    const request = this.#request(frame);
    if (request === null) return undefined;
    if ('reply' in request) return this.#write(request.reply);
    const core = this.#coreReady;
    if (core === undefined) return this.#runWhenLoaded(request);
    this.#isListen = request.get('cmd') === 'listen';
    return core.execute(request, this.#abort.signal).then(this.#onOutcome);
  }

  /** The reply of a command (its promise resolves once the reply is written or needs nothing more). */
  readonly #onOutcome = (outcome: CommandOutcome): Promise<void> | undefined => {
    const core = this.#coreReady;
    if (this.#isListen && core !== undefined) return this.#answerListen(core, outcome);
    return outcome.kind === 'reply' ? this.#write(outcome.text) : undefined;
  };

  /** A line that came while the state was still loading: waits for it (or answers its failure). */
  async #runWhenLoaded(request: JsonObject): Promise<void> {
    let core: AgentSyncProtocol;
    try {
      core = await this.#core;
    } catch (err) {
      await this.#write(errorReply(err instanceof Error ? err.message : String(err)));
      return;
    }
    this.#isListen = request.get('cmd') === 'listen';
    await this.#onOutcome(await core.execute(request, this.#abort.signal));
  }

  /** Decodes and parses one line: the request, or the error reply for bad input, or null (closed). */
  #request(bytes: Buffer): LineRequest {
    if (!isUtf8(bytes)) return { reply: errorReply(WireErrors.invalidUtf8) };
    const text = bytes.toString('utf8');
    const parsed = parseJson(text);
    if (!parsed.ok) {
      if (HTTP_LINE.test(text.trimEnd())) {
        this.#log.warn('an HTTP request reached the agent_sync port: connection closed');
        this.#frames.length = 0;
        this.#socket.destroy();
        return null;
      }
      const error = parsed.isNumberOutOfRange === true ? WireErrors.numberOutOfRange : WireErrors.invalidJson;
      return { reply: errorReply(error) };
    }
    if (!isJsonObject(parsed.value)) return { reply: errorReply(WireErrors.notAnObject) };
    return parsed.value;
  }

  /** Writes a listen reply only to a live client; its messages are committed once the OS took the bytes. */
  #answerListen(core: AgentSyncProtocol, outcome: CommandOutcome): Promise<void> | undefined {
    // An end of stream sent right behind the listen is read by libuv only in the next poll phase: let
    // one loop turn pass so such a listen is cancelled instead of answered (spec 4.5).
    if (outcome.kind === 'reply' && !this.#isEnded) {
      this.#turnOutcome = outcome;
      return this.#turns.next().then(this.#afterTurn);
    }
    return this.#replyToListen(core, outcome);
  }

  readonly #afterTurn = (): Promise<void> | undefined => {
    const outcome = this.#turnOutcome;
    const core = this.#coreReady;
    this.#turnOutcome = undefined;
    return outcome === undefined || core === undefined ? undefined : this.#replyToListen(core, outcome);
  };

  #replyToListen(core: AgentSyncProtocol, outcome: CommandOutcome): Promise<void> | undefined {
    const reservation = outcome.kind === 'reply' ? outcome.reservation : null;
    if (outcome.kind === 'cancelled' || this.#isEnded || this.#isClosed || this.#isFinishing) {
      if (reservation !== null) void core.settle(reservation, false);
      this.#finish();
      return undefined;
    }
    if (reservation === null) return this.#write(outcome.text);
    // Settled as soon as written, so the removal is queued before any later request runs (spec 4.5).
    this.#written = { core, reservation, wake: undefined };
    if (this.#socket.write(`${outcome.text}\n`, this.#onListenWritten) && this.#socket.writableLength === 0) {
      // libuv handed every byte to the OS within the call: written now, whatever the callback says later.
      this.#settleWritten(true);
      return undefined;
    }
    return new Promise<void>((resolve) => {
      if (this.#written === undefined) resolve();
      else this.#written.wake = resolve;
    });
  }

  /** The write callback of a listen reply (one in flight at most: lines run one after another). */
  readonly #onListenWritten = (err?: Error | null): void => {
    this.#settleWritten(err === undefined || err === null);
  };

  #settleWritten(isWritten: boolean): void {
    const written = this.#written;
    if (written === undefined) return;
    this.#written = undefined;
    void written.core.settle(written.reservation, isWritten);
    written.wake?.();
  }

  /** Writes one reply line; resolves at once unless the socket buffer is full (then at `drain`). */
  #write(text: string): Promise<void> | undefined {
    if (this.#isClosed || this.#socket.write(`${text}\n`)) return undefined;
    return new Promise<void>((resolve) => {
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
