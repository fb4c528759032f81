import { z } from 'zod';
import { MusubiError } from '../../core/errors.js';
import { MAILBOX_NAME_PATTERN } from '../../core/names.js';

/** A `limit` query parameter: digits, 1 to `max`, `fallback` when absent. */
export function limitParam(fallback: number, max: number): z.ZodType<number> {
  return z
    .string()
    .regex(/^\d{1,6}$/, 'limit must be a number')
    .transform(Number)
    .pipe(z.number().int().min(1).max(max))
    .optional()
    .transform((v) => v ?? fallback);
}

/** A cursor query parameter or header: digits only. */
export const cursorParam = z
  .string()
  .regex(/^\d{1,15}$/, 'cursor must be a non-negative integer')
  .transform(Number);

/** An agent or mailbox name. */
export const nameParam = z.string().regex(MAILBOX_NAME_PATTERN, 'invalid agent or mailbox name');

/** An opaque id in a path (task ids come from other systems): printable, no slashes needed. */
export const idParam = z
  .string()
  .min(1)
  .max(256)
  .refine((id) => !/\p{Cc}/u.test(id), 'invalid id');

/**
 * Parses request input with `schema`; throws GATEWAY_FRAME_INVALID (HTTP 400) listing every issue with
 * its path, prefixed by `what` (query, params, body).
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => `${[what, ...i.path].join('.')}: ${i.message}`);
  throw new MusubiError('GATEWAY_FRAME_INVALID', `invalid request: ${issues.join('; ')}`, {
    details: { issues },
  });
}

/**
 * Parses a query string's parameters with `schema`, an empty parameter (`?agent=&limit=`, as an HTML
 * form sends it) counting as absent; throws GATEWAY_FRAME_INVALID like {@link parseInput}.
 */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  const present =
    typeof query === 'object' && query !== null
      ? Object.fromEntries(Object.entries(query).filter(([, v]) => v !== ''))
      : query;
  return parseInput(schema, present, 'query');
}
