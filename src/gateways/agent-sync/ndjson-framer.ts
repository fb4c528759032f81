/** One unit cut from the byte stream by {@link NdjsonFramer}. */
export type Frame = { readonly kind: 'line'; readonly bytes: Buffer } | { readonly kind: 'too-long' };

/**
 * Splits a byte stream into `\n`-terminated lines without decoding them (UTF-8 is checked per line by
 * the caller). A line whose content exceeds `maxLineBytes` yields one `too-long` frame, after which the
 * framer yields nothing more: the connection is about to close. Buffers at most `maxLineBytes` + one chunk.
 */
export class NdjsonFramer {
  readonly #maxLineBytes: number;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #isOverflowed = false;

  constructor(options: { readonly maxLineBytes: number }) {
    this.#maxLineBytes = options.maxLineBytes;
  }

  /** Feeds one chunk; returns the frames it completed, in order. */
  push(chunk: Buffer): Frame[] {
    const frames: Frame[] = [];
    let start = 0;
    while (!this.#isOverflowed) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) {
        this.#keep(chunk.subarray(start));
        break;
      }
      const part = chunk.subarray(start, nl);
      start = nl + 1;
      if (this.#pendingBytes + part.length > this.#maxLineBytes) {
        this.#overflow(frames);
        break;
      }
      const bytes = this.#pendingBytes === 0 ? part : Buffer.concat([...this.#pending, part]);
      this.#pending = [];
      this.#pendingBytes = 0;
      frames.push({ kind: 'line', bytes });
    }
    if (!this.#isOverflowed && this.#pendingBytes > this.#maxLineBytes) this.#overflow(frames);
    return frames;
  }

  /** End of stream: a non-empty unterminated last line becomes a final frame. */
  end(): Frame[] {
    if (this.#isOverflowed || this.#pendingBytes === 0) return [];
    const bytes = Buffer.concat(this.#pending);
    this.#pending = [];
    this.#pendingBytes = 0;
    return [{ kind: 'line', bytes }];
  }

  #keep(part: Buffer): void {
    if (part.length === 0) return;
    this.#pending.push(part);
    this.#pendingBytes += part.length;
  }

  #overflow(frames: Frame[]): void {
    this.#isOverflowed = true;
    this.#pending = [];
    this.#pendingBytes = 0;
    frames.push({ kind: 'too-long' });
  }
}
