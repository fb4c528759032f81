import { z } from 'zod';
import type { Clock } from './clock.js';
import { MusubiError } from './errors.js';
import type { IdGenerator } from './ids.js';
import { isMailboxName, MAILBOX_NAME_PATTERN } from './names.js';

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
const MESSAGE_TYPE_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,127}$/;
const HEADER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const NO_CR_LF_NUL = /^[^\r\n\0]*$/;
const MAX_HEADERS = 64;
const MAX_HEADER_VALUE_LENGTH = 4096;
const MAX_THREAD_LENGTH = 256;

const mailboxName = z.string().regex(MAILBOX_NAME_PATTERN, 'invalid mailbox name');
const headerName = z.string().regex(HEADER_NAME_PATTERN, 'invalid header name');
// Header values travel in MIME headers and HTTP later: no CR, LF or NUL, ever.
const headerValue = z
  .string()
  .max(MAX_HEADER_VALUE_LENGTH)
  .regex(NO_CR_LF_NUL, 'header values must not contain CR, LF or NUL');

/** The envelope schema: validated wherever an envelope enters musubi. */
export const envelopeSchema = z.strictObject({
  id: z.string().regex(ENVELOPE_ID_PATTERN, 'invalid envelope id'),
  from: mailboxName,
  to: mailboxName,
  type: z.string().regex(MESSAGE_TYPE_PATTERN, 'invalid message type'),
  priority: z.enum(PRIORITIES),
  thread: z.string().min(1).max(MAX_THREAD_LENGTH).regex(NO_CR_LF_NUL).optional(),
  headers: z
    .record(headerName, headerValue)
    .refine((h) => Object.keys(h).length <= MAX_HEADERS, `at most ${MAX_HEADERS} headers`),
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

/** What a sender provides; the rest is filled in by {@link createEnvelope}. */
export const envelopeInputSchema = envelopeSchema.omit({ attempt: true }).extend({
  id: envelopeSchema.shape.id.optional(),
  priority: envelopeSchema.shape.priority.optional(),
  headers: envelopeSchema.shape.headers.optional(),
  body: envelopeSchema.shape.body.optional(),
  createdAt: envelopeSchema.shape.createdAt.optional(),
});
export type EnvelopeInput = z.input<typeof envelopeInputSchema>;
type ParsedInput = z.output<typeof envelopeInputSchema>;

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

const INPUT_KEYS: ReadonlySet<string> = new Set(Object.keys(envelopeInputSchema.shape));
const PRIORITY_SET: ReadonlySet<unknown> = new Set(PRIORITIES);

function isPriority(v: unknown): v is Priority {
  return PRIORITY_SET.has(v);
}

function isOptionalString(v: unknown, pattern: RegExp, maxLength = Infinity): v is string | undefined {
  return v === undefined || (typeof v === 'string' && v.length <= maxLength && pattern.test(v));
}

function isOptionalCount(v: unknown): v is number | undefined {
  return v === undefined || (Number.isSafeInteger(v) && (v as number) >= 0);
}

/** A copy of `headers` when it certainly passes the headers schema, else null. */
function copyHeadersFast(headers: unknown): Record<string, string> | null {
  if (typeof headers !== 'object' || headers === null) return null;
  if (Object.getPrototypeOf(headers) !== Object.prototype) return null;
  const keys = Object.keys(headers);
  // Symbol and non-enumerable keys have their own rules in the schema: leave such objects to it.
  if (keys.length > MAX_HEADERS || Reflect.ownKeys(headers).length !== keys.length) return null;
  const copy: Record<string, string> = {};
  for (const key of keys) {
    const value: unknown = (headers as Record<string, unknown>)[key];
    if (!HEADER_NAME_PATTERN.test(key)) return null; // also rejects an own `__proto__`
    if (typeof value !== 'string' || value.length > MAX_HEADER_VALUE_LENGTH || !NO_CR_LF_NUL.test(value)) {
      return null;
    }
    copy[key] = value;
  }
  return copy;
}

/**
 * What {@link envelopeInputSchema} would return for `input` when `input` certainly passes it, else
 * null (the schema then decides and words the errors). zod dominated the cost of a send, and nearly
 * every input is a plain, valid object, so this checks the common shapes by hand. It reads `input` as
 * the schema does: keys by `for...in`, each field by property access.
 */
function parseInputFast(input: unknown): ParsedInput | null {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return null;
  for (const key in input) if (!INPUT_KEYS.has(key)) return null;
  const { id, from, to, type, priority, thread, headers, body, createdAt } = input as Record<string, unknown>;
  if (!isOptionalString(id, ENVELOPE_ID_PATTERN)) return null;
  if (!isMailboxName(from) || !isMailboxName(to)) return null;
  if (typeof type !== 'string' || !MESSAGE_TYPE_PATTERN.test(type)) return null;
  if (priority !== undefined && !isPriority(priority)) return null;
  if (thread === '' || !isOptionalString(thread, NO_CR_LF_NUL, MAX_THREAD_LENGTH)) return null;
  // UTF-8 takes at most 3 bytes per UTF-16 unit: a body this short is within the limit.
  if (body !== undefined && (typeof body !== 'string' || body.length * 3 > MAX_BODY_BYTES)) return null;
  if (!isOptionalCount(createdAt)) return null;
  const headersCopy = headers === undefined ? undefined : copyHeadersFast(headers);
  if (headersCopy === null) return null;
  return { id, from, to, type, priority, thread, headers: headersCopy, body, createdAt };
}

/** Validates sender input and fills id, priority, headers, body, createdAt and attempt 0. */
export function createEnvelope(input: unknown, deps: { ids: IdGenerator; clock: Clock }): Envelope {
  let v = parseInputFast(input);
  if (v === null) {
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
    headers: v.headers ?? {},
    body: v.body ?? '',
    createdAt: v.createdAt ?? deps.clock.now(),
    attempt: 0,
  };
  if (v.thread !== undefined) envelope.thread = v.thread;
  return envelope;
}
