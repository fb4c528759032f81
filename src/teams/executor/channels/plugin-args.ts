import { z } from 'zod';

/** Outcome of checking plugin arguments against an entry's JSON Schema. */
export type ArgsCheck = { readonly ok: true } | { readonly ok: false; readonly detail: string };

/**
 * Validates `args` against a JSON Schema by converting it to a zod schema (`z.fromJSONSchema`). A schema
 * zod cannot convert fails the check with that reason rather than letting unchecked arguments through.
 */
export function checkPluginArgs(schema: Record<string, unknown>, args: Record<string, unknown>): ArgsCheck {
  let validator: z.ZodType;
  try {
    validator = z.fromJSONSchema(schema);
  } catch (err) {
    return {
      ok: false,
      detail: `unsupported args_schema: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  const parsed = validator.safeParse(args);
  if (parsed.success) return { ok: true };
  const detail = parsed.error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
  return { ok: false, detail };
}
