/** A canonical queue file name: `{type}_{16-digit microseconds}.mime` (spec/ignite.md 2.2). */
export const CANONICAL_NAME_PATTERN = /^.+_[0-9]{16}\.mime$/;

/** The longest file name (bytes) common file systems accept (NAME_MAX); longer ones fail ENAMETOOLONG. */
export const NAME_MAX_BYTES = 255;

/** The longest prefix of `text` with at most `maxBytes` bytes of UTF-8 (whole characters only). */
export function cutToBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    bytes += Buffer.byteLength(ch, 'utf8');
    if (bytes > maxBytes) break;
    out += ch;
  }
  return out;
}

/** The 16-digit time of a canonical name, or null for any other name. */
export function nameStamp(name: string): bigint | null {
  const match = /_([0-9]{16})\.mime$/.exec(name);
  return match?.[1] === undefined ? null : BigInt(match[1]);
}

/** `{type}_{stamp}.mime` with the stamp zero-padded to 16 digits. */
export function canonicalName(type: string, stamp: bigint): string {
  return `${type}_${stamp.toString().padStart(16, '0')}.mime`;
}

/** What a new queue file needs: folder, type (checked: no `/`, NUL or leading `.`), content and time. */
export interface NewQueueFile {
  readonly dir: string;
  readonly type: string;
  readonly content: string;
  /** Current time in milliseconds with a fraction (microseconds), e.g. timeOrigin + performance.now(). */
  readonly nowMs: number;
}

/**
 * Tries `<dir>/<type>_<usec>.mime` names from the current microsecond upwards until `create` accepts one
 * (it refuses names that exist): a writer never replaces a file created in the same microsecond. The path
 * is built by concatenation, not path.join, because the send tool prints it exactly as constructed.
 */
export function* queueFileCandidates(file: NewQueueFile): Generator<string> {
  for (let stamp = BigInt(Math.floor(file.nowMs * 1000)); ; stamp += 1n)
    yield `${file.dir}/${canonicalName(file.type, stamp)}`;
}
