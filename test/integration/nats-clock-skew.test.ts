import { afterEach, describe, expect, it } from 'vitest';
import { createSystemClock, type Clock } from '../../src/core/clock.js';
import { isMusubiError } from '../../src/core/errors.js';
import { parseNatsUrl } from '../../src/store/nats/nats-location.js';
import { NatsStore } from '../../src/store/nats/nats-store.js';
import type { Delivery } from '../../src/store/store.js';
import {
  deleteNamespace,
  natsUnavailableReason,
  SHARED_NATS,
  uniquePrefix,
} from '../fixtures/nats-server.js';
import { envelope } from '../store-conformance/conformance-context.js';

// Hubs sharing one prefix whose clocks disagree (an injected offset on the real clock): leases follow the
// NATS server's time, so a hub a few seconds ahead does not take over a lease early, and a hub far off
// takes no lease at all. Counted: no message is handed out twice while its lease runs.
const unavailable = await natsUnavailableReason();
const system = createSystemClock();
const closers: (() => Promise<void>)[] = [];
let prefix = '';

/** The real clock moved by `offsetMs` (a hub whose clock is that far ahead; negative: behind). */
function skewed(offsetMs: number): Clock {
  return { now: () => system.now() + offsetMs, setTimer: (fn, ms) => system.setTimer(fn, ms) };
}

async function hub(offsetMs: number): Promise<NatsStore> {
  const store = await NatsStore.open({
    location: parseNatsUrl(`nats://${SHARED_NATS}?prefix=${prefix}&connectTimeoutMs=2000`),
    clock: skewed(offsetMs),
  });
  closers.push(() => store.close());
  return store;
}

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  if (unavailable === null) await deleteNamespace(SHARED_NATS, prefix);
});

describe.skipIf(unavailable !== null)('NATS store leases under clock skew', () => {
  it('a hub 3 s ahead waits for the real end of another hub’s lease; nothing is handed out twice early', async () => {
    prefix = uniquePrefix('skew');
    const honest = await hub(0);
    const ahead = await hub(3_000);
    const behind = await hub(-3_000);
    for (let i = 0; i < 5; i++) await honest.append('work', envelope(`m-${i}`, { to: 'work' }));
    const leaseMs = 1_500;
    const held: Delivery[] = [];
    for (let i = 0; i < 5; i++) {
      const d = await honest.claim('work', { leaseMs });
      if (d !== null) held.push(d);
    }
    expect(held).toHaveLength(5);
    const leaseEnds = Math.max(...held.map((d) => d.leaseUntil));
    // Without the correction the hub 3 s ahead would see every lease as long over.
    const early: Delivery[] = [];
    while (system.now() < leaseEnds - 300) {
      for (const other of [ahead, behind]) {
        const d = await other.claim('work', { leaseMs: 60_000 });
        if (d !== null) early.push(d);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(early).toEqual([]);
    // Once the leases really ended, the hub ahead takes them over (each once), and the old holder's
    // ack is refused.
    const later: Delivery[] = [];
    const deadline = system.now() + 5_000;
    while (later.length < 5 && system.now() < deadline) {
      const d = await ahead.claim('work', { leaseMs: 60_000 });
      if (d === null) await new Promise((resolve) => setTimeout(resolve, 50));
      else later.push(d);
    }
    expect(new Set(later.map((d) => d.envelope.id)).size).toBe(5);
    const stale: unknown = await honest.ack(held[0]?.deliveryId ?? '').catch((e: unknown) => e);
    expect(isMusubiError(stale, 'LEASE_EXPIRED') || isMusubiError(stale, 'NOT_FOUND')).toBe(true);
  }, 30_000);

  it('a hub 30 s off takes no lease and says by how much; the others carry on', async () => {
    prefix = uniquePrefix('skew');
    const honest = await hub(0);
    const far = await hub(30_000);
    await honest.append('work', envelope('m-1', { to: 'work' }));
    const err: unknown = await far.claim('work', { leaseMs: 60_000 }).catch((e: unknown) => e);
    expect(isMusubiError(err, 'STORE_UNAVAILABLE')).toBe(true);
    expect(String((err as Error).message)).toMatch(/clock is 30\.\d s ahead of the NATS server's/);
    expect(far.clockOffsetMs).toBeGreaterThan(29_000);
    const d = await honest.claim('work', { leaseMs: 60_000 });
    expect(d?.envelope.id).toBe('m-1');
    await honest.ack(d?.deliveryId ?? '');
  }, 30_000);
});
