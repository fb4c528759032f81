/**
 * Resolves `{ value }` when `promise` settles first, or `null` as soon as `signal` aborts (at once if
 * it already has). The promise keeps running; `onLate` receives its value if it arrives after the
 * abort (to release what it created), and a late rejection is dropped.
 */
export function untilAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal,
  onLate: (value: T) => void = () => undefined,
): Promise<{ readonly value: T } | null> {
  if (signal.aborted) {
    promise.then(onLate, () => undefined);
    return Promise.resolve(null);
  }
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      promise.then(onLate, () => undefined);
      resolve(null);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        if (!signal.aborted) resolve({ value });
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        if (!signal.aborted) reject(err);
      },
    );
  });
}
