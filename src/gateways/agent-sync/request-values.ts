import { isJsonArray, isJsonObject, type JsonObject, type JsonValue } from './json-value.js';

/** The request's value for `key`, or `fallback` when the key is absent (a present `null` stays `null`). */
export function valueOr(request: JsonObject, key: string, fallback: JsonValue): JsonValue {
  const value = request.get(key);
  return value === undefined ? fallback : value;
}

/** Python truthiness of a JSON value. */
export function isTruthy(v: JsonValue): boolean {
  if (v === null || v === false) return false;
  if (v === true) return true;
  if (typeof v === 'string') return v.length > 0;
  if (isJsonArray(v)) return v.length > 0;
  if (isJsonObject(v)) return v.size > 0;
  return v.isInteger ? BigInt(v.token) !== 0n : v.value !== 0;
}
