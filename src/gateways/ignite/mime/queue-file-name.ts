import { createFileExclusive } from './atomic-file.js';
import { microsStamp } from './mime-time.js';

/** A canonical queue file name: `{type}_{16-digit microseconds}.mime` (spec/ignite.md 2.2). */
export const CANONICAL_NAME_PATTERN = /^.+_[0-9]{16}\.mime$/;

/** The 16-digit time of a canonical name, or null for any other name. */
export function nameStamp(name: string): bigint | null {
  const match = /_([0-9]{16})\.mime$/.exec(name);
  return match?.[1] === undefined ? null : BigInt(match[1]);
}

/** `{type}_{stamp}.mime` with the stamp zero-padded to 16 digits. */
export function canonicalName(type: string, stamp: bigint): string {
  return `${type}_${stamp.toString().padStart(16, '0')}.mime`;
}

/** What {@link writeNewQueueFile} needs. */
export interface NewQueueFile {
  readonly dir: string;
  readonly type: string;
  readonly content: string;
  /** Current time in milliseconds with a fraction (microseconds), e.g. timeOrigin + performance.now(). */
  readonly nowMs: number;
}

/**
 * Writes `content` atomically as `<dir>/<type>_<usec>.mime`, never replacing an existing file: when the
 * name is taken the stamp is incremented until a free name is found. Resolves the path written.
 * `type` must already be checked to hold no `/`, NUL or leading `.`.
 */
export async function writeNewQueueFile(file: NewQueueFile): Promise<string> {
  let stamp = microsStamp(file.nowMs);
  for (;;) {
    // Plain concatenation, not path.join: the send tool prints the path exactly as constructed (`./.ignite/…`).
    const path = `${file.dir}/${canonicalName(file.type, stamp)}`;
    if (await createFileExclusive(path, file.content)) return path;
    stamp += 1n;
  }
}
