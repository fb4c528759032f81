/**
 * Freezes `value` and every plain object and array reachable from it, in place, and returns it. Other
 * objects (Date, Map, typed arrays) are left as they are: values passing through the store are JSON by
 * contract, and freezing a typed array with elements would throw. Already frozen objects are skipped,
 * which also ends cycles.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  const proto: unknown = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return value;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
  return value;
}
