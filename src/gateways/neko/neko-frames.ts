import { z } from 'zod';
import type { ChatMessage } from '../../teams/executor/conversation.js';
import type { AnalyzeInput } from '../../teams/executor/turn-intake.js';

/** Frames larger than this are dropped unparsed (spec 5: ignored, never a crash). */
export const DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024;
/** The session key of requests without a usable `lanlan_name`. */
export const DEFAULT_SESSION_KEY = '__default__';
const MAX_EVENT_ID_CHARS = 256;

/** Session events main publishes that the agent server accepts and ignores (spec 3.1). */
const IGNORED_SESSION_EVENTS = new Set([
  'voice_transcript_observed',
  'voice_transcript_request',
  'provider_frame_observed',
  'conversation_turn_observed',
]);

/** What one inbound frame asks for. */
export type InboundEvent =
  | {
      readonly kind: 'analyze';
      /** Present when the request wants an ack. */
      readonly eventId?: string;
      /** Undefined when `messages` is not an array (acked, otherwise ignored). */
      readonly input?: AnalyzeInput;
    }
  | { readonly kind: 'restore'; readonly sessionKey: string; readonly isNewSession: boolean }
  | { readonly kind: 'ignored'; readonly reason: string };

const frameSchema = z.looseObject({ event_type: z.string() });

const messageSchema = z.looseObject({
  role: z.string(),
  content: z.unknown().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  attachments: z.array(z.unknown()).optional(),
});

const attachmentSchema = z.looseObject({ url: z.string() });

/** The session key of a frame: the trimmed `lanlan_name`, `__default__` when missing or empty. */
export function sessionKeyOf(value: unknown): string {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : DEFAULT_SESSION_KEY;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) =>
      typeof part === 'object' && part !== null && 'text' in part && typeof part.text === 'string'
        ? part.text
        : '',
    )
    .filter((t) => t !== '')
    .join('\n');
}

function senderOf(metadata: Record<string, unknown> | undefined): string | undefined {
  for (const key of ['sender_id', 'senderId']) {
    const value = metadata?.[key];
    if (typeof value === 'string' && value !== '') return value;
    if (typeof value === 'number') return String(value);
  }
  return undefined;
}

/** The chat items of a request; items that are not `{role, ...}` objects are skipped. */
export function chatMessages(raw: readonly unknown[]): ChatMessage[] {
  return raw.flatMap((item) => {
    const m = messageSchema.safeParse(item);
    if (!m.success) return [];
    const urls = (m.data.attachments ?? []).flatMap((a) => {
      const parsed = attachmentSchema.safeParse(a);
      return parsed.success ? [parsed.data.url] : [];
    });
    const sender = senderOf(m.data.metadata);
    return [
      {
        role: m.data.role,
        text: textOf(m.data.content),
        attachmentUrls: urls,
        ...(sender !== undefined && { senderId: sender }),
      },
    ];
  });
}

function analyzeEvent(frame: Record<string, unknown>): InboundEvent {
  const rawId = frame['event_id'];
  const eventId =
    typeof rawId === 'string' && rawId !== '' && rawId.length <= MAX_EVENT_ID_CHARS ? rawId : undefined;
  const withId = eventId === undefined ? {} : { eventId };
  const messages = frame['messages'];
  if (!Array.isArray(messages)) return { kind: 'analyze', ...withId };
  const intent = frame['external_intent'];
  const conversationId = frame['conversation_id'];
  const language = frame['language'];
  const input: AnalyzeInput = {
    sessionKey: sessionKeyOf(frame['lanlan_name']),
    trigger: frame['trigger'] === 'session_end' ? 'session_end' : 'turn_end',
    messages: chatMessages(messages),
    isProactive: frame['proactive'] === true,
    ...(typeof intent === 'number' && intent >= 0 && intent <= 1 && { externalIntent: intent }),
    ...(typeof conversationId === 'string' && conversationId !== '' && { conversationId }),
    ...(typeof language === 'string' && language !== '' && { language }),
  };
  return { kind: 'analyze', ...withId, input };
}

/**
 * Parses one ZeroMQ frame: a UTF-8 JSON object with `event_type`. Anything else — too large, not
 * UTF-8 JSON, not an object, an unknown `event_type` — is `ignored` with the reason (for a debug log).
 */
export function parseInboundFrame(frame: Buffer, maxBytes = DEFAULT_MAX_FRAME_BYTES): InboundEvent {
  if (frame.byteLength > maxBytes)
    return { kind: 'ignored', reason: `frame of ${frame.byteLength} bytes is too large` };
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(frame));
  } catch {
    return { kind: 'ignored', reason: 'frame is not UTF-8 JSON' };
  }
  const parsed = frameSchema.safeParse(value);
  if (!parsed.success || Array.isArray(value))
    return { kind: 'ignored', reason: 'frame is not an object with event_type' };
  const frameObject = parsed.data;
  const type = frameObject.event_type;
  if (type === 'analyze_request') return analyzeEvent(frameObject);
  if (type === 'agent_intent_restore_signal') {
    return {
      kind: 'restore',
      sessionKey: sessionKeyOf(frameObject['lanlan_name']),
      isNewSession: frameObject['new_session'] === true,
    };
  }
  if (IGNORED_SESSION_EVENTS.has(type)) return { kind: 'ignored', reason: `session event ${type}` };
  return { kind: 'ignored', reason: `unknown event_type ${JSON.stringify(type.slice(0, 80))}` };
}
