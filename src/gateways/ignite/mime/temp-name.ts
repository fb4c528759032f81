import { basename, dirname, join } from 'node:path';
import { cutToBytes, NAME_MAX_BYTES } from './queue-file-name.js';

let counter = 0;

/**
 * A temp file name beside `path`: `.<name>.<unique>.tmp`. It starts with `.` so queue readers ignore it
 * and the monitor recognises an atomic writer's rename. Files are created exclusively, so a collision
 * only costs a retry; no cryptographic randomness is needed (and node:crypto stays unloaded). A final
 * name too long for that (near NAME_MAX) is cut in the temp name, so it can still be written atomically.
 */
export function tempPathFor(path: string): string {
  counter = (counter + 1) % 0x1000000;
  const unique = `${process.pid.toString(36)}${counter.toString(36)}${Math.floor(Math.random() * 0xffffffff).toString(36)}`;
  const room = NAME_MAX_BYTES - `..${unique}.tmp`.length;
  return join(dirname(path), `.${cutToBytes(basename(path), room)}.${unique}.tmp`);
}
