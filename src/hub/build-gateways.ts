import type { Bus } from '../bus/bus.types.js';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.schema.js';
import type { Logger } from '../core/logger.js';
import type { Gateway } from '../gateways/gateway.js';

/** Builds every gateway the config enables, in start order. */
export function buildGateways(deps: { bus: Bus; config: Config; logger: Logger; clock: Clock }): Gateway[] {
  const gateways: Gateway[] = [];
  void deps;
  return gateways;
}
