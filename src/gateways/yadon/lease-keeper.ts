import type { Bus } from '../../bus/bus.types.js';
import type { Clock, Timer } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';

/**
 * Extends a delivery's lease every third of its length (at least every second) until cancelled, so a
 * long agent turn keeps its task. A failed extension is logged and retried at the next tick.
 */
export function keepLeaseAlive(options: {
  readonly bus: Pick<Bus, 'extend'>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly deliveryId: string;
  readonly leaseMs: number;
}): Timer {
  const every = Math.max(1_000, Math.floor(options.leaseMs / 3));
  let timer: Timer | undefined;
  let isCancelled = false;
  const tick = (): void => {
    options.bus
      .extend(options.deliveryId, { leaseMs: options.leaseMs })
      .catch((err: unknown) => options.logger.warn({ err }, 'lease extension failed'))
      .finally(() => {
        if (!isCancelled) timer = options.clock.setTimer(tick, every);
      });
  };
  timer = options.clock.setTimer(tick, every);
  return {
    cancel: () => {
      isCancelled = true;
      timer?.cancel();
    },
  };
}
