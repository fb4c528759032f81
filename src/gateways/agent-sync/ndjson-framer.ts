/** Stands for a line longer than the limit in a frame queue: the connection is about to close. */
export const LINE_TOO_LONG = 'too-long';

/** One unit cut from the byte stream by {@link NdjsonFramer}: a line's bytes (no `\n`), or too long. */
export type Frame = Buffer | typeof LINE_TOO_LONG;

/**
 * Splits a byte stream into `\n`-terminated lines without decoding them (UTF-8 is checked per line by
 * the caller). A line whose content exceeds `maxLineBytes` yields one {@link LINE_TOO_LONG} frame, after
 * which the framer yields nothing more: the connection is about to close. Buffers at most
 * `maxLineBytes` + one chunk. A line within one chunk is a view of that chunk, not a copy.
 */
export class NdjsonFramer {
  readonly #maxLineBytes: number;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #isOverflowed = false;

  constructor(options: { readonly maxLineBytes: number }) {
    this.#maxLineBytes = options.maxLineBytes;
  }

  /** Feeds one chunk; appends the frames it completed to `out`, in order. */
  push(chunk: Buffer, out: Frame[]): void {
    let start = 0;
    while (!this.#isOverflowed) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) {
        // A chunk that ended with its last line (the usual case) leaves nothing: no empty view.
        if (start < chunk.length) this.#keep(chunk.subarray(start));
        break;
      }
      const length = nl - start;
      if (this.#pendingBytes + length > this.#maxLineBytes) {
        this.#overflow(out);
        break;
      }
      if (this.#pendingBytes === 0) out.push(chunk.subarray(start, nl));
      else {
        out.push(Buffer.concat([...this.#pending, chunk.subarray(start, nl)]));
        this.#pending = [];
        this.#pendingBytes = 0;
      }
      start = nl + 1;
    }
    if (!this.#isOverflowed && this.#pendingBytes > this.#maxLineBytes) this.#overflow(out);
  }

  /** End of stream: a non-empty unterminated last line becomes a final frame, appended to `out`. */
  end(out: Frame[]): void {
    if (this.#isOverflowed || this.#pendingBytes === 0) return;
    out.push(Buffer.concat(this.#pending));
    this.#pending = [];
    this.#pendingBytes = 0;
  }

  #keep(part: Buffer): void {
    this.#pending.push(part);
    this.#pendingBytes += part.length;
  }

  #overflow(out: Frame[]): void {
    this.#isOverflowed = true;
    this.#pending = [];
    this.#pendingBytes = 0;
    out.push(LINE_TOO_LONG);
  }
}
