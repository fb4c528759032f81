import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../test/fakes/fake-clock.js';
import { isMusubiError } from '../../core/errors.js';
import { ServerClock, type ClockSample } from './server-clock.js';

describe('ServerClock', () => {
  it('corrects the local clock by the offset of the tightest round trip', async () => {
    const local = new FakeClock();
    const t = local.now();
    const samples: ClockSample[] = [
      { sentAt: t, ackedAt: t + 40, serverAt: t - 4_990 }, // loose: says 5,010
      { sentAt: t, ackedAt: t + 2, serverAt: t - 4_999 }, // tight: 5,000
      { sentAt: t, ackedAt: t + 20, serverAt: t - 5_020 },
    ];
    const clock = new ServerClock({ local, probe: () => Promise.resolve(samples.shift() as ClockSample) });
    expect(await clock.measure()).toBe(5_000);
    expect(clock.now()).toBe(local.now() - 5_000);
    local.advance(1_000);
    expect(clock.now()).toBe(local.now() - 5_000);
    expect(() => clock.assertCanLease()).not.toThrow();
  });

  it('refuses leases beyond the bound, saying by how much and which way, and measures again later', async () => {
    const local = new FakeClock();
    let offset = -30_000;
    const probe = (): Promise<ClockSample> => {
      const now = local.now();
      return Promise.resolve({ sentAt: now, ackedAt: now, serverAt: now - offset });
    };
    const clock = new ServerClock({ local, probe });
    await clock.measure();
    let err: unknown;
    try {
      clock.assertCanLease();
    } catch (e) {
      err = e;
    }
    expect(isMusubiError(err, 'STORE_UNAVAILABLE')).toBe(true);
    expect(String((err as Error).message)).toContain('30.0 s behind the NATS server');
    clock.startMeasuring();
    offset = 20;
    local.advance(30_000);
    await new Promise((resolve) => setImmediate(resolve));
    expect(clock.offsetMs).toBe(20);
    expect(() => clock.assertCanLease()).not.toThrow();
    clock.close();
  });
});
