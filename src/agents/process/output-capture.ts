/** Default cap on what is kept of one output stream: 8 MiB. */
export const DEFAULT_OUTPUT_CAP_BYTES = 8 * 1024 * 1024;

const TAIL_BYTES = 4096;
const NEWLINE = 0x0a;

/** Options of {@link OutputCapture}. */
export interface OutputCaptureOptions {
  /** Bytes kept (from the start); the rest is counted and dropped. Also the longest line delivered. */
  readonly capBytes: number;
  /** Called with each complete line (without `\n`, a trailing `\r` removed) as it arrives. */
  readonly onLine?: (line: string) => void;
}

/**
 * Captures one output stream with bounded memory: the first `capBytes` bytes, a rolling tail of the
 * last 4 KiB, the total byte count, and lines delivered as they complete. A line longer than the cap
 * is delivered cut at the cap and the rest of it is skipped.
 */
export class OutputCapture {
  readonly #capBytes: number;
  readonly #onLine: ((line: string) => void) | undefined;
  readonly #head: Buffer[] = [];
  #headBytes = 0;
  #totalBytes = 0;
  #tail: Buffer = Buffer.alloc(0);
  #line: Buffer[] = [];
  #lineBytes = 0;
  #isSkippingLine = false;

  constructor(options: OutputCaptureOptions) {
    this.#capBytes = options.capBytes;
    this.#onLine = options.onLine;
  }

  /** Adds a chunk read from the stream. */
  push(chunk: Buffer): void {
    this.#totalBytes += chunk.length;
    if (this.#headBytes < this.#capBytes) {
      const kept = chunk.subarray(0, this.#capBytes - this.#headBytes);
      this.#head.push(kept);
      this.#headBytes += kept.length;
    }
    this.#tail = Buffer.concat([this.#tail, chunk.subarray(-TAIL_BYTES)]).subarray(-TAIL_BYTES);
    if (this.#onLine !== undefined) this.#splitLines(chunk);
  }

  /** Delivers a last line that had no trailing newline. Call once when the stream ends. */
  end(): void {
    if (this.#lineBytes > 0 && !this.#isSkippingLine) this.#emitLine();
    this.#line = [];
    this.#lineBytes = 0;
  }

  /** The kept bytes as UTF-8 text. */
  text(): string {
    return Buffer.concat(this.#head).toString('utf8');
  }

  /** The last 4 KiB seen, as UTF-8 text (a cut multi-byte character shows as U+FFFD). */
  tail(): string {
    return this.#tail.toString('utf8');
  }

  get totalBytes(): number {
    return this.#totalBytes;
  }

  get isTruncated(): boolean {
    return this.#totalBytes > this.#capBytes;
  }

  #splitLines(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(NEWLINE, start);
      const piece = chunk.subarray(start, nl === -1 ? chunk.length : nl);
      this.#appendToLine(piece);
      if (nl === -1) return;
      if (!this.#isSkippingLine) this.#emitLine();
      this.#isSkippingLine = false;
      this.#line = [];
      this.#lineBytes = 0;
      start = nl + 1;
    }
  }

  #appendToLine(piece: Buffer): void {
    if (this.#isSkippingLine || piece.length === 0) return;
    const room = this.#capBytes - this.#lineBytes;
    this.#line.push(piece.subarray(0, room));
    this.#lineBytes += Math.min(piece.length, room);
    if (piece.length > room) {
      this.#emitLine();
      this.#isSkippingLine = true;
    }
  }

  #emitLine(): void {
    let line = Buffer.concat(this.#line).toString('utf8');
    if (line.endsWith('\r')) line = line.slice(0, -1);
    try {
      this.#onLine?.(line);
    } catch {
      // A listener's failure must not break capture; the AgentRunInput contract says onEvent must not throw.
    }
  }
}
