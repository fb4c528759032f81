import type { Clock } from './clock.js';

/** An abort signal with a deadline; dispose it when the work ends so its timer and listeners go. */
export interface DeadlineSignal extends Disposable {
  /** Aborts with the reason of the first of `signals` to abort, or a `TimeoutError` at the deadline. */
  readonly signal: AbortSignal;
  /** Cancels the timer and removes the listeners on `signals`; `signal` keeps its state. Idempotent. */
  dispose(): void;
}

/** Options of {@link createDeadlineSignal}. */
export interface DeadlineSignalOptions {
  /** Signals the deadline follows (often the caller's cancel signal); may be empty. */
  readonly signals: readonly AbortSignal[];
  readonly timeoutMs: number;
  readonly clock: Clock;
}

/**
 * What `AbortSignal.any([...signals, AbortSignal.timeout(ms)])` means, built so it always fires. On
 * Node 20 `AbortSignal.any` holds its sources weakly, and a timeout signal referenced only from the
 * composite can be collected before it fires: the deadline silently never comes. Here one controller is
 * held by the clock timer and by a listener on each source. At the deadline the signal aborts with the
 * same reason `AbortSignal.timeout` gives (a `DOMException` named `TimeoutError`). A source that is
 * already aborted aborts the signal at once, with its reason, and no timer is set. The timer is the
 * clock's (unref'd on the system clock, as `AbortSignal.timeout`'s is) and is cancelled on dispose.
 */
export function createDeadlineSignal(options: DeadlineSignalOptions): DeadlineSignal {
  const controller = new AbortController();
  const { signal } = controller;
  const already = options.signals.find((s) => s.aborted);
  if (already !== undefined) {
    controller.abort(already.reason);
    return { signal, dispose: () => undefined, [Symbol.dispose]: () => undefined };
  }
  const follow = options.signals.map((source) => {
    const onAbort = (): void => {
      dispose();
      controller.abort(source.reason);
    };
    source.addEventListener('abort', onAbort, { once: true });
    return { source, onAbort };
  });
  const timer = options.clock.setTimer(() => {
    dispose();
    controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'));
  }, options.timeoutMs);
  function dispose(): void {
    timer.cancel();
    for (const { source, onAbort } of follow) source.removeEventListener('abort', onAbort);
  }
  return { signal, dispose, [Symbol.dispose]: dispose };
}
