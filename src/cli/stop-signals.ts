/** What a foreground command hears when the user stops it. */
export interface StopSignals {
  /** Resolves with the first SIGINT or SIGTERM. */
  readonly stopped: Promise<NodeJS.Signals>;
  /** Aborts at the same moment, its reason the signal's name. */
  readonly signal: AbortSignal;
  /** Removes the handlers (idempotent); a signal after it takes Node's default action again. */
  dispose(): void;
}

/**
 * The one "run until SIGINT/SIGTERM" of the CLI: installs handlers for both, and on the first one
 * removes them, aborts `signal` and resolves `stopped`. A command that stops for another reason calls
 * `dispose()`.
 */
export function stopSignals(): StopSignals {
  const controller = new AbortController();
  let resolve: (signal: NodeJS.Signals) => void = () => undefined;
  const stopped = new Promise<NodeJS.Signals>((r) => (resolve = r));
  const onSignal = (signal: NodeJS.Signals): void => {
    dispose();
    controller.abort(signal);
    resolve(signal);
  };
  const dispose = (): void => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { stopped, signal: controller.signal, dispose };
}

/** Resolves with the first SIGINT or SIGTERM (and removes its handlers). */
export function untilStopSignal(): Promise<NodeJS.Signals> {
  return stopSignals().stopped;
}
