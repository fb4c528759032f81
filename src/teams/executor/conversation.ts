import { createHash } from 'node:crypto';

/** One chat item of the window main sends with an analyze request. */
export interface ChatMessage {
  /** `user`, `assistant`, or `system` (for injected context); other roles are kept as given. */
  readonly role: string;
  readonly text: string;
  /** A sender id from the item's metadata, when main knows who spoke. */
  readonly senderId?: string;
  readonly attachmentUrls: readonly string[];
}

/** Messages shown to the assessment: the last ten. */
export const ASSESSMENT_WINDOW = 10;

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The part of one user message that identifies it: sender, text and attachment URLs (no times, no ids). */
function signatureText(message: ChatMessage): string {
  const sender = message.senderId === undefined ? '' : `[sender:${message.senderId}]`;
  return [sender + message.text, ...message.attachmentUrls].join('\n');
}

/** SHA-256 of one user message's identifying text (used to match cancelled requests). */
export function messageSignature(message: ChatMessage): string {
  return sha256(signatureText(message));
}

/** SHA-256 over the window's user messages, or null when the window has none (nothing to analyse). */
export function userTurnFingerprint(messages: readonly ChatMessage[]): string | null {
  const users = messages.filter((m) => m.role === 'user');
  return users.length === 0 ? null : sha256(users.map(signatureText).join('\n'));
}

/** SHA-256 of the latest assistant text (the proactive fingerprint), or null without one. */
export function assistantFingerprint(messages: readonly ChatMessage[]): string | null {
  const text = latestText(messages, 'assistant');
  return text === null ? null : sha256(text);
}

/** The text of the latest message with `role`, or null. */
export function latestText(messages: readonly ChatMessage[], role: string): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === role) return m.text;
  }
  return null;
}

function describeImages(message: ChatMessage): string {
  const n = message.attachmentUrls.length;
  if (n === 0) return message.text;
  if (message.text.trim() === '') return `[User attached ${n} image(s) without text]`;
  return `${message.text} [Attached images: ${n}]`;
}

/**
 * The conversation as the assessment sees it: `LATEST_USER_REQUEST: <text>` (the latest assistant text
 * for proactive requests), then `<role>: <text>` lines for the last ten messages, newlines flattened.
 */
export function conversationText(messages: readonly ChatMessage[], options: { proactive: boolean }): string {
  const role = options.proactive ? 'assistant' : 'user';
  let latest = '';
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === role) {
      latest = describeImages(m);
      break;
    }
  }
  const lines = messages.slice(-ASSESSMENT_WINDOW).map((m) => `${m.role}: ${flatten(describeImages(m))}`);
  return [`LATEST_USER_REQUEST: ${flatten(latest)}`, ...lines].join('\n');
}

/** Replaces line breaks with spaces, so one value stays on one line of a prompt. */
export function flatten(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}
