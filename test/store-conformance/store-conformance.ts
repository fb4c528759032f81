import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../fakes/fake-clock.js';
import { availableCases } from './available-cases.js';
import type { ConformanceContext } from './conformance-context.js';
import { deadLetterCases } from './dead-letter-cases.js';
import { discardCases } from './discard-cases.js';
import { eventCases } from './event-cases.js';
import { fencingCases } from './fencing-cases.js';
import { inspectionCases } from './inspection-cases.js';
import { kvCases } from './kv-cases.js';
import { leaseCases } from './lease-cases.js';
import { lifecycleCases } from './lifecycle-cases.js';
import { messageCases } from './message-cases.js';
import { takeCases } from './take-cases.js';
import type { Store } from '../../src/store/store.js';

/** Options for {@link describeStoreConformance}. */
export interface StoreConformanceOptions {
  /** Case titles this store skips, each with the reason; a title that names no case fails the suite. */
  readonly skip?: Readonly<Record<string, string>>;
}

/**
 * Registers the Store conformance suite (vitest `describe`/`it`) for one implementation. Every store's
 * test file calls it once. `makeStore` gets a fresh FakeClock per case and must return a fresh, empty
 * store that reads time from it; the suite closes each store after its case (the caller removes any
 * files). Lease and delay cases move time only through the injected clock.
 */
export function describeStoreConformance(
  name: string,
  makeStore: (clock: FakeClock) => Promise<Store>,
  options: StoreConformanceOptions = {},
): void {
  const skip = options.skip ?? {};
  describe(`Store conformance: ${name}`, () => {
    let current: { store: Store; clock: FakeClock } | undefined;
    const titles = new Set<string>();

    beforeEach(async () => {
      const clock = new FakeClock();
      current = { store: await makeStore(clock), clock };
    });
    afterEach(async () => {
      await current?.store.close();
      current = undefined;
    });

    const running = (): { store: Store; clock: FakeClock } => {
      if (current === undefined) throw new Error('store conformance: no store outside a running case');
      return current;
    };
    const context: ConformanceContext = {
      test: (title, fn) => {
        titles.add(title);
        const reason = skip[title];
        if (reason === undefined) it(title, fn);
        else it.skip(`${title} (skipped: ${reason})`, fn);
      },
      store: () => running().store,
      clock: () => running().clock,
      passTime: async (ms) => running().clock.advance(ms),
    };

    describe('messages', () => messageCases(context));
    describe('leases', () => leaseCases(context));
    describe('take', () => takeCases(context));
    describe('dead letters', () => deadLetterCases(context));
    describe('fencing', () => fencingCases(context));
    describe('discard', () => discardCases(context));
    describe('inspection', () => inspectionCases(context));
    describe('onAvailable', () => availableCases(context));
    describe('key-value', () => kvCases(context));
    describe('events', () => eventCases(context));
    describe('close', () => lifecycleCases(context));

    it('skips only cases that exist', () => {
      expect(Object.keys(skip).filter((title) => !titles.has(title))).toEqual([]);
    });
  });
}
