import type { Envelope } from '../../core/envelope.js';

/** Characters of a body shown in lists; the rest is cut and flagged. */
export const BODY_PREVIEW_CHARS = 2000;

/** An envelope as lists show it: the body cut to a preview. */
export type EnvelopeView = Omit<Envelope, 'body'> & { readonly body: string; readonly isBodyCut: boolean };

/** The envelope with its body cut to `maxChars` (code points are never split). */
export function toEnvelopeView(envelope: Envelope, maxChars = BODY_PREVIEW_CHARS): EnvelopeView {
  const chars = Array.from(envelope.body.slice(0, maxChars * 2));
  const isBodyCut = chars.length > maxChars || envelope.body.length > maxChars * 2;
  return { ...envelope, body: isBodyCut ? chars.slice(0, maxChars).join('') : envelope.body, isBodyCut };
}
