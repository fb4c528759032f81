import { z } from 'zod';
import { envelopeSchema, type Envelope } from '../../core/envelope.js';
import { MusubiError } from '../../core/errors.js';
import { busEventSchema, type StoredEvent } from '../../core/events.js';

/**
 * Row schemas and decoders: every row read back from SQLite is checked here before use. A row that
 * fails becomes STORE_CORRUPT naming where it was found; it is never handed out half-parsed.
 */

/** Hand checks of plain column schemas: a row whose every column passes one skips zod (see parseRow). */
const columnChecks = new Map<z.ZodType, (value: unknown) => boolean>();
function column<T extends z.ZodType>(schema: T, check: (value: unknown) => boolean): T {
  columnChecks.set(schema, check);
  return schema;
}
const int = column(z.number().int(), Number.isSafeInteger);
const text = column(z.string(), (v) => typeof v === 'string');
const nullableInt = column(int.nullable(), (v) => v === null || Number.isSafeInteger(v));
const nullableText = column(z.string().nullable(), (v) => v === null || typeof v === 'string');

export const seqRow = z.object({ seq: int });
export const deliveryStateRow = z.object({
  seq: int,
  attempt: int,
  state: int,
  is_leased: int,
  available_at: int,
});
export const leasedRow = z.object({
  seq: int,
  id: text,
  attempt: int,
  envelope: nullableText,
  available_at: int,
});
export const peekRow = z.object({
  priority: int,
  seq: int,
  attempt: int,
  envelope: nullableText,
  is_leased: int,
  available_at: int,
});
export type PeekRow = z.infer<typeof peekRow>;
export const deadRow = z.object({
  seq: int,
  mailbox: text,
  attempt: int,
  envelope: nullableText,
  dead_reason: text,
  dead_at: int,
});
export const countsRow = z.object({
  mailbox: text,
  ready: int,
  delayed: int,
  leased: int,
  total: int,
  deadLetters: int,
});
export const dueRow = z.object({ due: nullableInt });
export const kvValueRow = z.object({ key: text, value: text, revision: int });
export const kvRevisionRow = z.object({ revision: int });
export const kvLogRow = z.object({
  revision: int,
  key: text,
  op: z.enum(['put', 'delete']),
  value: nullableText,
});
export const eventRow = z.object({
  cursor: int,
  at: int,
  event: text,
  kind: int,
  mailbox: nullableText,
  message_id: nullableText,
  n1: nullableInt,
  n2: nullableInt,
});
export const cursorRow = z.object({ cursor: int });

/** Parses a row with `schema`, throwing STORE_CORRUPT (naming `where`) when it does not fit. */
export function parseRow<T>(schema: z.ZodType<T>, row: unknown, where: string): T {
  if (plainCheckOf(schema)?.(row) === true) return row as T;
  const result = schema.safeParse(row);
  if (result.success) return result.data;
  throw corrupt(`${where}: unexpected row shape`, result.error);
}

const plainChecks = new WeakMap<z.ZodType, ((row: unknown) => boolean) | null>();

/**
 * For an object schema made only of {@link column}s, a check that accepts a row exactly when each of
 * its columns passes (what the schema would accept, without zod's cost on every row read); else null.
 */
function plainCheckOf(schema: z.ZodType): ((row: unknown) => boolean) | null {
  let check = plainChecks.get(schema);
  if (check !== undefined) return check;
  check = null;
  if (schema instanceof z.ZodObject) {
    const columns = Object.entries(schema.shape as Record<string, z.ZodType>).map(
      ([name, field]) => [name, columnChecks.get(field)] as const,
    );
    if (columns.every(([, c]) => c !== undefined)) {
      check = (row) => {
        if (typeof row !== 'object' || row === null) return false;
        const record = row as Record<string, unknown>;
        for (const [name, c] of columns) if (c?.(record[name]) !== true) return false;
        return true;
      };
    }
  }
  plainChecks.set(schema, check);
  return check;
}

/** Decodes a stored envelope (kept with attempt 0) and sets the live attempt count. */
export function decodeEnvelope(text: string, attempt: number, where: string): Envelope {
  const result = envelopeSchema.safeParse({ ...parseJsonObject(text, where), attempt });
  if (result.success) return result.data;
  throw corrupt(`${where}: stored envelope is invalid`, result.error);
}

/** Decodes the JSON of a stored event into a StoredEvent. */
export function decodeEvent(cursor: number, at: number, event: string): StoredEvent {
  const result = busEventSchema.safeParse(parseJson(event, `event ${cursor}`));
  // Not `{ ...data, cursor, at }`: V8 is slow when a spread clone gains new properties.
  if (result.success) return Object.assign({}, result.data, { cursor, at });
  throw corrupt(`event ${cursor}: stored event is invalid`, result.error);
}

/** STORE_CORRUPT for an event row whose columns do not make an event of its kind. */
export function corruptEvent(cursor: number, kind: number): MusubiError {
  return corrupt(`event ${cursor}: columns do not fit its kind ${kind}`, undefined);
}

/** Parses stored JSON text, throwing STORE_CORRUPT when it is not JSON. */
export function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw corrupt(`${where}: stored JSON does not parse`, err);
  }
}

const jsonObject = z.record(z.string(), z.unknown());

function parseJsonObject(text: string, where: string): Record<string, unknown> {
  const result = jsonObject.safeParse(parseJson(text, where));
  if (result.success) return result.data;
  throw corrupt(`${where}: stored envelope is not an object`, result.error);
}

function corrupt(message: string, cause: unknown): MusubiError {
  return new MusubiError('STORE_CORRUPT', message, { cause });
}
