/** Stands for a line longer than the limit: its bytes were dropped, up to and including its `\n`. */
export const LINE_TOO_LONG = 'too-long';

/** One unit cut from the byte stream by {@link LineFramer}: a line's bytes (no `\n`), or too long. */
export type LineFrame = Buffer | typeof LINE_TOO_LONG;

/**
 * Splits a byte stream into `\n`-terminated lines without decoding them. A line whose content exceeds
 * `maxLineBytes` yields one {@link LINE_TOO_LONG} frame as soon as it passes the limit; the rest of it
 * is dropped as it arrives, not buffered, and framing goes on after its `\n`. So at most `maxLineBytes`
 * are held between chunks. A line within one chunk is a view of that chunk, not a copy. An
 * unterminated last line is never yielded (as with the SDK's stdio transport).
 */
export class LineFramer {
  readonly #maxLineBytes: number;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #isSkipping = false;

  constructor(options: { readonly maxLineBytes: number }) {
    this.#maxLineBytes = options.maxLineBytes;
  }

  /** Feeds one chunk; returns the frames it completed, in order. */
  push(chunk: Buffer): LineFrame[] {
    const frames: LineFrame[] = [];
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl < 0 ? chunk.length : nl;
      if (this.#isSkipping) {
        this.#isSkipping = nl < 0;
      } else if (this.#pendingBytes + (end - start) > this.#maxLineBytes) {
        this.#pending = [];
        this.#pendingBytes = 0;
        this.#isSkipping = nl < 0;
        frames.push(LINE_TOO_LONG);
      } else if (nl < 0) {
        this.#pending.push(chunk.subarray(start));
        this.#pendingBytes += chunk.length - start;
      } else {
        frames.push(this.#take(chunk.subarray(start, nl)));
      }
      start = end + 1;
    }
    return frames;
  }

  #take(tail: Buffer): Buffer {
    if (this.#pendingBytes === 0) return tail;
    const line = Buffer.concat([...this.#pending, tail]);
    this.#pending = [];
    this.#pendingBytes = 0;
    return line;
  }
}
