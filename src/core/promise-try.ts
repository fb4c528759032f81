/**
 * `run()`'s outcome as a promise, like `Promise.try` (which Node 20 lacks): a value resolves, a promise
 * is handed back as it is, a throw rejects. Lets a function on a hot path check its arguments and hand
 * back a promise without an async frame of its own, while a failed check still rejects, never throws.
 */
export function promiseTry<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    return Promise.resolve(run());
  } catch (err) {
    return Promise.reject(err);
  }
}
