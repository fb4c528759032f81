import type { JsonObject, JsonValue } from '../../core/python/json-loads.js';

/** The request's value for `key`, or `fallback` when the key is absent (a present `null` stays `null`). */
export function valueOr(request: JsonObject, key: string, fallback: JsonValue): JsonValue {
  const value = request.get(key);
  return value === undefined ? fallback : value;
}
