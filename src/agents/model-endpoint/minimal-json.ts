// JSON values that satisfy a JSON schema well enough for a CLI's own validation of its side requests.

/** Values for fields a type default would get wrong (gemini's routing score is 1–100). */
const KNOWN_FIELDS: Readonly<Record<string, unknown>> = { complexity_score: 1 };

/** The smallest value a JSON schema (OpenAPI or JSON-Schema spelling) accepts: required fields filled. */
export function minimalJson(schema: unknown, field = ''): unknown {
  if (Object.hasOwn(KNOWN_FIELDS, field)) return KNOWN_FIELDS[field];
  if (typeof schema !== 'object' || schema === null) return null;
  const s: Record<string, unknown> = { ...schema };
  if (Array.isArray(s['enum']) && s['enum'].length > 0) return s['enum'][0];
  const type = String(Array.isArray(s['type']) ? s['type'][0] : (s['type'] ?? 'object')).toLowerCase();
  if (type === 'string') return 'musubi model endpoint';
  if (type === 'integer' || type === 'number') return typeof s['minimum'] === 'number' ? s['minimum'] : 0;
  if (type === 'boolean') return false;
  if (type === 'array') return [];
  const props = typeof s['properties'] === 'object' && s['properties'] !== null ? s['properties'] : {};
  const required = Array.isArray(s['required']) ? s['required'].map(String) : Object.keys(props);
  const out: Record<string, unknown> = {};
  for (const [name, prop] of Object.entries(props))
    if (required.includes(name)) out[name] = minimalJson(prop, name);
  return out;
}

/** The text is a JSON object with every top-level field the schema requires. */
export function hasRequiredFields(text: string, schema: unknown): boolean {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return false;
  }
  const expected = minimalJson(schema);
  if (typeof expected !== 'object' || expected === null) return value !== null;
  if (typeof value !== 'object' || value === null) return false;
  return Object.keys(expected).every((k) => Object.hasOwn(value, k));
}
