import type { Clock, Timer } from '../../core/clock.js';
import { MusubiError } from '../../core/errors.js';

/** Beyond this offset from the NATS server's clock a hub takes no lease (see ServerClock). */
export const MAX_CLOCK_OFFSET_MS = 10_000;
/** How often the offset is measured again while the store is open. */
const REMEASURE_MS = 30_000;
/** Round trips per measurement; the tightest one counts. */
const SAMPLES = 3;

/** One round trip to the server: local times around a write, and the server's time stamped on it. */
export interface ClockSample {
  readonly sentAt: number;
  readonly ackedAt: number;
  readonly serverAt: number;
}

function describeOffset(offsetMs: number): string {
  const seconds = (Math.abs(offsetMs) / 1000).toFixed(1);
  return `${seconds} s ${offsetMs > 0 ? 'ahead of' : 'behind'}`;
}

/**
 * The NATS server's time as seen from this hub: the local clock corrected by its offset from the
 * timestamps JetStream puts on stored messages. Every lease and delay of a NATS store is decided on
 * it, so hubs whose clocks disagree still agree on when a lease ends. The offset is measured at open
 * and every 30 s after (a write, then the server's stamp on it, taking the midpoint of the tightest
 * of three round trips; its error is at most half that round trip). A hub more than
 * {@link MAX_CLOCK_OFFSET_MS} off refuses to take leases (claims and extensions throw
 * STORE_UNAVAILABLE saying by how much), since a clock that far off may jump again between
 * measurements. Timers run on the local clock (they are durations).
 */
export class ServerClock implements Clock {
  readonly #local: Clock;
  readonly #probe: () => Promise<ClockSample>;
  readonly #maxOffsetMs: number;
  #offsetMs = 0;
  #timer: Timer | undefined;
  #isClosed = false;

  constructor(options: {
    readonly local: Clock;
    readonly probe: () => Promise<ClockSample>;
    readonly maxOffsetMs?: number;
  }) {
    this.#local = options.local;
    this.#probe = options.probe;
    this.#maxOffsetMs = options.maxOffsetMs ?? MAX_CLOCK_OFFSET_MS;
  }

  /** How far the local clock is ahead of the server's (negative: behind), as last measured. */
  get offsetMs(): number {
    return this.#offsetMs;
  }

  now(): number {
    return this.#local.now() - this.#offsetMs;
  }

  setTimer(fn: () => void, delayMs: number): Timer {
    return this.#local.setTimer(fn, delayMs);
  }

  /** Measures the offset now; rejects when the server cannot be asked (the caller decides). */
  async measure(): Promise<number> {
    let best: ClockSample | undefined;
    for (let i = 0; i < SAMPLES; i++) {
      const sample = await this.#probe();
      if (best === undefined || sample.ackedAt - sample.sentAt < best.ackedAt - best.sentAt) best = sample;
    }
    if (best !== undefined) this.#offsetMs = Math.round((best.sentAt + best.ackedAt) / 2 - best.serverAt);
    return this.#offsetMs;
  }

  /** Measures again every 30 s until close(); a failed measurement keeps the last offset. */
  startMeasuring(): void {
    const again = (): void => {
      if (this.#isClosed) return;
      this.#timer = this.#local.setTimer(() => {
        void this.measure()
          .catch(() => undefined)
          .finally(again);
      }, REMEASURE_MS);
    };
    again();
  }

  /** Throws STORE_UNAVAILABLE when this hub's clock is too far off the server's to take leases. */
  assertCanLease(): void {
    if (Math.abs(this.#offsetMs) <= this.#maxOffsetMs) return;
    throw new MusubiError(
      'STORE_UNAVAILABLE',
      `this hub's clock is ${describeOffset(this.#offsetMs)} the NATS server's (more than ` +
        `${this.#maxOffsetMs / 1000} s): it takes no leases, so no message is handled twice because of it. ` +
        'Set the clock right (NTP); leases resume within 30 s of that',
      { details: { offsetMs: this.#offsetMs, maxOffsetMs: this.#maxOffsetMs } },
    );
  }

  close(): void {
    this.#isClosed = true;
    this.#timer?.cancel();
  }
}
