import { z } from 'zod';
import type { Clock } from './clock.js';
import { MusubiError } from './errors.js';
import type { IdGenerator } from './ids.js';
import { MAILBOX_NAME_PATTERN } from './names.js';

/** Delivery priorities, most urgent first; a mailbox hands out by priority, then send order. */
export const PRIORITIES = ['critical', 'high', 'normal', 'low'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** Numeric rank of a priority: 0 is most urgent. */
export function priorityRank(priority: Priority): number {
  return PRIORITIES.indexOf(priority);
}

/** Largest envelope body accepted anywhere (bytes of UTF-8). */
export const MAX_BODY_BYTES = 1024 * 1024;
/** Envelope ids are also idempotency keys and part of delivery ids, so they have a safe alphabet. */
export const ENVELOPE_ID_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

/**
 * Text that stays on one line wherever it is written (MIME and HTTP headers, line-based files, logs):
 * no control character but TAB, and none of the breaks some readers split on (NEL, U+2028, U+2029).
 */
// eslint-disable-next-line no-control-regex -- excluding control characters is the purpose
export const ONE_LINE_TEXT = /^[^\x00-\x08\x0a-\x1f\x7f\x85\u2028\u2029]*$/;

/** True when `text` matches {@link ONE_LINE_TEXT}. */
export function isOneLine(text: string): boolean {
  return ONE_LINE_TEXT.test(text);
}

const mailboxName = z.string().regex(MAILBOX_NAME_PATTERN, 'invalid mailbox name');
const HEADER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const MESSAGE_TYPE = /^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$/;
const headerName = z.string().regex(HEADER_NAME, 'invalid header name');
// What stored envelopes hold: no CR, LF or NUL. New envelopes are held to ONE_LINE_TEXT (see
// envelopeInputSchema); rows and journal records written before that rule still decode.
const NO_CR_LF_NUL = /^[^\r\n\0]*$/;
const storedHeaderValue = z
  .string()
  .max(4096)
  .regex(NO_CR_LF_NUL, 'header values must not contain CR, LF or NUL');
const headerValue = z
  .string()
  .max(4096)
  .regex(ONE_LINE_TEXT, 'header values must not contain line breaks or control characters');
const headerCount = (h: Record<string, string>): boolean => Object.keys(h).length <= 64;

/**
 * The envelope schema: validated wherever an envelope enters musubi, and wherever a stored one is read
 * back. New envelopes pass the stricter {@link envelopeInputSchema} first.
 */
export const envelopeSchema = z.strictObject({
  id: z.string().regex(ENVELOPE_ID_PATTERN, 'invalid envelope id'),
  from: mailboxName,
  to: mailboxName,
  type: z.string().regex(MESSAGE_TYPE, 'invalid message type'),
  priority: z.enum(PRIORITIES),
  thread: z
    .string()
    .min(1)
    .max(256)
    .regex(NO_CR_LF_NUL, 'a thread must not contain CR, LF or NUL')
    .optional(),
  headers: z.record(headerName, storedHeaderValue).refine(headerCount, 'at most 64 headers'),
  body: z
    .string()
    .refine(
      (b) => Buffer.byteLength(b, 'utf8') <= MAX_BODY_BYTES,
      `body larger than ${MAX_BODY_BYTES} bytes`,
    ),
  createdAt: z.number().int().nonnegative(),
  attempt: z.number().int().nonnegative(),
});

/** A message on the bus. `id` is the idempotency key; `attempt` counts deliveries so far. */
export type Envelope = z.infer<typeof envelopeSchema>;

/**
 * What a sender provides; the rest is filled in by {@link createEnvelope}. Header values and the thread
 * must be {@link ONE_LINE_TEXT}.
 */
export const envelopeInputSchema = envelopeSchema.omit({ attempt: true }).extend({
  id: envelopeSchema.shape.id.optional(),
  priority: envelopeSchema.shape.priority.optional(),
  thread: z
    .string()
    .min(1)
    .max(256)
    .regex(ONE_LINE_TEXT, 'a thread must not contain line breaks or control characters')
    .optional(),
  headers: z.record(headerName, headerValue).refine(headerCount, 'at most 64 headers').optional(),
  body: envelopeSchema.shape.body.optional(),
  createdAt: envelopeSchema.shape.createdAt.optional(),
});
export type EnvelopeInput = z.input<typeof envelopeInputSchema>;

function invalid(error: z.ZodError): MusubiError {
  const issues = error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
  return new MusubiError('ENVELOPE_INVALID', `invalid envelope: ${issues.join('; ')}`, {
    details: { issues },
  });
}

/** Validates a complete envelope; throws `ENVELOPE_INVALID` listing every problem. */
export function parseEnvelope(value: unknown): Envelope {
  const result = envelopeSchema.safeParse(value);
  if (!result.success) throw invalid(result.error);
  return result.data;
}

type ParsedInput = z.output<typeof envelopeInputSchema>;
const INPUT_KEYS = new Set(Object.keys(envelopeInputSchema.shape));

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
const isOptional = (value: unknown, check: (v: unknown) => boolean): boolean =>
  value === undefined || check(value);
const isMatch =
  (pattern: RegExp) =>
  (value: unknown): boolean =>
    typeof value === 'string' && pattern.test(value);
const isEnvelopeId = isMatch(ENVELOPE_ID_PATTERN);
const isMailboxName = isMatch(MAILBOX_NAME_PATTERN);
const isMessageType = isMatch(MESSAGE_TYPE);
const isPriority = (value: unknown): boolean => (PRIORITIES as readonly unknown[]).includes(value);
const isThread = (value: unknown): boolean =>
  typeof value === 'string' && value.length >= 1 && value.length <= 256 && isOneLine(value);
const isBody = (value: unknown): boolean =>
  typeof value === 'string' &&
  (value.length * 3 <= MAX_BODY_BYTES || Buffer.byteLength(value, 'utf8') <= MAX_BODY_BYTES);
const isTime = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) >= 0;
const isHeaders = (value: unknown): boolean => {
  if (!isPlainObject(value)) return false;
  const names = Object.keys(value);
  if (names.length > 64) return false;
  for (const name of names) {
    const text = value[name];
    if (!HEADER_NAME.test(name) || typeof text !== 'string' || text.length > 4096 || !isOneLine(text))
      return false;
  }
  return true;
};

/**
 * The sender input when it plainly passes {@link envelopeInputSchema} (the common case, checked by hand
 * because the schema costs a few microseconds per send); undefined when any field is absent-but-required,
 * unusual or invalid, and the schema then decides and words the error. Accepts only what the schema accepts.
 */
function plainEnvelopeInput(input: unknown): ParsedInput | undefined {
  if (!isPlainObject(input)) return undefined;
  for (const key in input) if (!INPUT_KEYS.has(key)) return undefined;
  const { id, from, to, type, priority, thread, headers, body, createdAt } = input;
  const isValid =
    isOptional(id, isEnvelopeId) &&
    isMailboxName(from) &&
    isMailboxName(to) &&
    isMessageType(type) &&
    isOptional(priority, isPriority) &&
    isOptional(thread, isThread) &&
    isOptional(headers, isHeaders) &&
    isOptional(body, isBody) &&
    isOptional(createdAt, isTime);
  return isValid ? (input as ParsedInput) : undefined;
}

/** Validates sender input and fills id, priority, headers, body, createdAt and attempt 0. */
export function createEnvelope(input: unknown, deps: { ids: IdGenerator; clock: Clock }): Envelope {
  let v = plainEnvelopeInput(input);
  if (v === undefined) {
    const result = envelopeInputSchema.safeParse(input);
    if (!result.success) throw invalid(result.error);
    v = result.data;
  }
  const envelope: Envelope = {
    id: v.id ?? deps.ids.next(),
    from: v.from,
    to: v.to,
    type: v.type,
    priority: v.priority ?? 'normal',
    // A copy: the caller's object must not be shared with the stored envelope (a frozen one can be).
    headers: v.headers === undefined ? {} : Object.isFrozen(v.headers) ? v.headers : { ...v.headers },
    body: v.body ?? '',
    createdAt: v.createdAt ?? deps.clock.now(),
    attempt: 0,
  };
  if (v.thread !== undefined) envelope.thread = v.thread;
  return envelope;
}
