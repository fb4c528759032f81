import { basename, dirname, join } from 'node:path';

let counter = 0;

/**
 * A temp file name beside `path`: `.<name>.<unique>.tmp`. It starts with `.` so queue readers ignore it
 * and the monitor recognises an atomic writer's rename. Files are created exclusively, so a collision
 * only costs a retry; no cryptographic randomness is needed (and node:crypto stays unloaded).
 */
export function tempPathFor(path: string): string {
  counter = (counter + 1) % 0x1000000;
  const unique = `${process.pid.toString(36)}${counter.toString(36)}${Math.floor(Math.random() * 0xffffffff).toString(36)}`;
  return join(dirname(path), `.${basename(path)}.${unique}.tmp`);
}
