import { randomBytes } from 'node:crypto';
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
  let lastRandom: number[] = [];
  return {
    next() {
      const now = clock.now();
      if (now > lastTime) {
        lastTime = now;
        lastRandom = Array.from(randomBytes(RANDOM_CHARS), (b) => b & 31);
      } else {
        // Increment the 80-bit random part as a base-32 number; overflow within one ms is 2^80 ids away.
        for (let i = RANDOM_CHARS - 1; i >= 0; i--) {
          const digit = (lastRandom[i] ?? 0) + 1;
          lastRandom[i] = digit & 31;
          if (digit < 32) break;
        }
      }
      return encodeTime(lastTime) + lastRandom.map((d) => ALPHABET.charAt(d)).join('');
    },
  };
}
