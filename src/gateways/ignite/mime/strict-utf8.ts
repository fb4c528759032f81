import { MusubiError } from '../../../core/errors.js';

const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Where and why a byte sequence is not UTF-8, in the words Python's codec uses. */
function firstInvalid(bytes: Uint8Array): { position: number; byte: number; reason: string } {
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i] ?? 0;
    const [need, min, max] =
      b < 0x80
        ? [0, 0, 0]
        : b >= 0xc2 && b <= 0xdf
          ? [1, 0x80, 0xbf]
          : b === 0xe0
            ? [2, 0xa0, 0xbf]
            : b === 0xed
              ? [2, 0x80, 0x9f]
              : b >= 0xe1 && b <= 0xef
                ? [2, 0x80, 0xbf]
                : b === 0xf0
                  ? [3, 0x90, 0xbf]
                  : b === 0xf4
                    ? [3, 0x80, 0x8f]
                    : b >= 0xf1 && b <= 0xf3
                      ? [3, 0x80, 0xbf]
                      : [-1, 0, 0];
    if (need === -1) return { position: i, byte: b, reason: 'invalid start byte' };
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined) return { position: i, byte: b, reason: 'unexpected end of data' };
      const [lo, hi] = k === 1 ? [min, max] : [0x80, 0xbf];
      if (c < lo || c > hi) return { position: i, byte: b, reason: 'invalid continuation byte' };
    }
    i += need + 1;
  }
  return { position: 0, byte: 0, reason: 'invalid data' };
}

/**
 * Decodes `bytes` as strict UTF-8 (a BOM is kept, as Python's `utf-8` codec keeps it). Throws
 * GATEWAY_FRAME_INVALID with Python's wording, e.g. `'utf-8' codec can't decode byte 0xff in position 0:
 * invalid start byte`.
 */
export function decodeUtf8Strict(bytes: Uint8Array): string {
  try {
    return decoder.decode(bytes);
  } catch (err) {
    const bad = firstInvalid(bytes);
    const hex = bad.byte.toString(16).padStart(2, '0');
    throw new MusubiError(
      'GATEWAY_FRAME_INVALID',
      `'utf-8' codec can't decode byte 0x${hex} in position ${bad.position}: ${bad.reason}`,
      { cause: err, details: { position: bad.position } },
    );
  }
}
