import type { Envelope } from '../../core/envelope.js';

/** An envelope as the model sees it: times as ISO text, the body possibly cut to a preview. */
export interface MessageView {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly type: string;
  readonly priority: string;
  readonly thread?: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** True when `body` is only the first `maxBodyChars` characters. */
  readonly isBodyCut?: true;
  readonly createdAt: string;
  /** Deliveries so far (1 on the first receive, more after a lease ran out or a retry). */
  readonly attempt: number;
}

/** The model-facing view of `envelope`; with `maxBodyChars` the body is cut there (never inside a code point). */
export function toMessageView(
  envelope: Envelope,
  options: { readonly maxBodyChars?: number } = {},
): MessageView {
  const max = options.maxBodyChars;
  let body = envelope.body;
  let isCut = false;
  if (max !== undefined && body.length > max) {
    const chars = Array.from(body.slice(0, max * 2));
    isCut = chars.length > max || body.length > max * 2;
    if (isCut) body = chars.slice(0, max).join('');
  }
  return {
    id: envelope.id,
    from: envelope.from,
    to: envelope.to,
    type: envelope.type,
    priority: envelope.priority,
    ...(envelope.thread === undefined ? {} : { thread: envelope.thread }),
    headers: envelope.headers,
    body,
    ...(isCut ? { isBodyCut: true as const } : {}),
    createdAt: new Date(envelope.createdAt).toISOString(),
    attempt: envelope.attempt,
  };
}
