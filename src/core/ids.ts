import { randomFillSync } from 'node:crypto';
import type { Clock } from './clock.js';

// Crockford base32, as ULID uses: lexicographic order equals time order.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;

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

function encodeTime(ms: number): string {
  let out = '';
  let rest = ms;
  for (let i = 0; i < TIME_CHARS; i++) {
    out = ALPHABET.charAt(rest % 32) + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

/**
 * Creates a monotonic ULID generator. Within one millisecond (or if the clock steps back) the random
 * part is incremented instead of redrawn, so ids from one generator are strictly increasing.
 */
export function createIdGenerator(clock: Clock): IdGenerator {
  let lastTime = -1;
  let timePart = ''; // encodeTime(lastTime), kept for the ids of the same millisecond
  const random = new Uint8Array(RANDOM_CHARS);
  return {
    next() {
      const now = clock.now();
      if (now > lastTime) {
        lastTime = now;
        timePart = encodeTime(now);
        drawRandomDigits(random);
      } else {
        // Increment the 80-bit random part as a base-32 number; overflow within one ms is 2^80 ids away.
        for (let i = RANDOM_CHARS - 1; i >= 0; i--) {
          const digit = (random[i] ?? 0) + 1;
          random[i] = digit & 31;
          if (digit < 32) break;
        }
      }
      let id = timePart;
      for (const digit of random) id += ALPHABET.charAt(digit);
      return id;
    },
  };
}
