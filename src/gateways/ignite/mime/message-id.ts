import { closeSync, openSync, readSync } from 'node:fs';

/** The Message-ID shape every IGNITE writer produces (spec/ignite.md 2.3). */
export const MESSAGE_ID_PATTERN = /^<\d+\.\d+\.\d+@ignite\.local>$/;

/**
 * 64 random bits. Read from /dev/urandom so the per-message tools need not load node:crypto (about 10 ms
 * of start-up); the Web Crypto global is the fallback where that device is missing.
 */
function random64(): bigint {
  const bytes = new Uint8Array(8);
  try {
    const fd = openSync('/dev/urandom', 'r');
    try {
      readSync(fd, bytes, 0, 8, null);
    } finally {
      closeSync(fd);
    }
  } catch {
    // No /dev/urandom (Windows): the Web Crypto API gives the same quality.
    globalThis.crypto.getRandomValues(bytes);
  }
  return new DataView(bytes.buffer).getBigUint64(0);
}

/**
 * A new Message-ID `<C.P.R@ignite.local>`: C = centiseconds since the epoch, P = the writer's process id,
 * R = a uniformly random 64-bit integer in decimal without padding.
 */
export function createMessageId(nowMs: number, pid: number): string {
  return `<${Math.floor(nowMs / 10)}.${pid}.${random64()}@ignite.local>`;
}
