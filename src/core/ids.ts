import { randomFillSync } from 'node:crypto';
import type { Clock } from './clock.js';

// Crockford base32, as ULID uses: lexicographic order equals time order.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;
/** The character code of each base-32 digit. */
const DIGIT_CODES = Array.from(ALPHABET, (c) => c.charCodeAt(0));

/** Produces sortable unique ids. */
export interface IdGenerator {
  /** A new 26-character ULID: later calls sort after earlier ones, even within one millisecond. */
  next(): string;
}

// Random bytes are drawn from the CSPRNG a pool at a time (one call per 256 ids instead of one per id).
const randomPool = new Uint8Array(RANDOM_CHARS * 256);
let poolOffset = randomPool.length;

/** Fills `digits` with fresh random base-32 digits. */
function drawRandomDigits(digits: Uint8Array): void {
  if (poolOffset === randomPool.length) {
    randomFillSync(randomPool);
    poolOffset = 0;
  }
  for (let i = 0; i < RANDOM_CHARS; i++) digits[i] = (randomPool[poolOffset + i] ?? 0) & 31;
  poolOffset += RANDOM_CHARS;
}

/** Writes the 10 time digits of `ms` into `codes` as character codes. */
function encodeTime(ms: number, codes: number[]): void {
  let rest = ms;
  for (let i = TIME_CHARS - 1; i >= 0; i--) {
    codes[i] = DIGIT_CODES[rest % 32] ?? 0;
    rest = Math.floor(rest / 32);
  }
}

/**
 * Creates a monotonic ULID generator. Within one millisecond (or if the clock steps back) the random
 * part is incremented instead of redrawn, so ids from one generator are strictly increasing. Each id is
 * made as one flat string from a buffer of character codes (string concatenation would build 26 pieces).
 */
export function createIdGenerator(clock: Clock): IdGenerator {
  let lastTime = -1;
  const random = new Uint8Array(RANDOM_CHARS);
  const codes = new Array<number>(TIME_CHARS + RANDOM_CHARS).fill(0);
  return {
    next() {
      const now = clock.now();
      if (now > lastTime) {
        lastTime = now;
        encodeTime(now, codes);
        drawRandomDigits(random);
      } else {
        // Increment the 80-bit random part as a base-32 number; overflow within one ms is 2^80 ids away.
        for (let i = RANDOM_CHARS - 1; i >= 0; i--) {
          const digit = (random[i] ?? 0) + 1;
          random[i] = digit & 31;
          if (digit < 32) break;
        }
      }
      for (let i = 0; i < RANDOM_CHARS; i++) codes[TIME_CHARS + i] = DIGIT_CODES[random[i] ?? 0] ?? 0;
      return String.fromCharCode.apply(null, codes);
    },
  };
}
