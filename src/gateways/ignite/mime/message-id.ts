import { randomBytes } from 'node:crypto';

/** The Message-ID shape every IGNITE writer produces (spec/ignite.md 2.3). */
export const MESSAGE_ID_PATTERN = /^<\d+\.\d+\.\d+@ignite\.local>$/;

/**
 * A new Message-ID `<C.P.R@ignite.local>`: C = centiseconds since the epoch, P = the writer's process id,
 * R = a uniformly random 64-bit integer in decimal without padding.
 */
export function createMessageId(nowMs: number, pid: number): string {
  const centis = Math.floor(nowMs / 10);
  const random = randomBytes(8).readBigUInt64BE(0);
  return `<${centis}.${pid}.${random}@ignite.local>`;
}
