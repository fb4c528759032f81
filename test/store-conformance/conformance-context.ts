import { expect } from 'vitest';
import type { FakeClock } from '../fakes/fake-clock.js';
import type { Envelope, Priority } from '../../src/core/envelope.js';
import { isMusubiError, type ErrorCode } from '../../src/core/errors.js';
import type { Delivery, Store } from '../../src/store/store.js';

/** What each group of conformance cases sees: the store and clock of the running test. */
export interface ConformanceContext {
  /** Registers one case (skipped when the store's skip list names its title). */
  readonly test: (title: string, fn: () => Promise<void>) => void;
  readonly store: () => Store;
  readonly clock: () => FakeClock;
  /**
   * Lets `ms` of store time pass. Lease and delay cases go through this one helper so that a store
   * that cannot follow an injected clock can later get a real-time variant here.
   */
  readonly passTime: (ms: number) => Promise<void>;
}

/** A valid envelope with test defaults; `id` is required so tests name their messages. */
export function envelope(
  id: string,
  overrides: Partial<Omit<Envelope, 'id'>> & { readonly priority?: Priority } = {},
): Envelope {
  return {
    id,
    from: 'alice',
    to: 'bob',
    type: 'note',
    priority: 'normal',
    headers: {},
    body: `body of ${id}`,
    createdAt: Date.UTC(2026, 0, 1),
    attempt: 0,
    ...overrides,
  };
}

/** Asserts that `call` returns a promise that rejects with a MusubiError carrying `code`. */
export async function expectCode(call: () => Promise<unknown>, code: ErrorCode): Promise<void> {
  let promise: Promise<unknown>;
  try {
    promise = call();
  } catch (err) {
    expect.fail(`expected a rejection with ${code}, but the call threw synchronously: ${String(err)}`);
  }
  let caught: unknown;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  expect(caught, `expected a rejection with ${code}`).toBeDefined();
  expect(isMusubiError(caught) ? caught.code : String(caught)).toBe(code);
}

/** The next item of an async iterator, failing the test if none arrives within `timeoutMs` real time. */
export async function nextWithin<T>(
  iterator: AsyncIterator<T>,
  timeoutMs = 5_000,
): Promise<IteratorResult<T>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no iterator result within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([iterator.next(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits (real time, short polls) until `predicate` holds, failing after `timeoutMs`. */
export async function waitFor(predicate: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) expect.fail(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Claims the only message expected in `mailbox`, failing when there is none. */
export async function claimOne(store: Store, mailbox: string, leaseMs = 1_000): Promise<Delivery> {
  const delivery = await store.claim(mailbox, { leaseMs });
  if (delivery === null) return expect.fail(`expected a claimable message in ${mailbox}`);
  return delivery;
}

/** The next `count` items of an async iterator, failing if it ends or stalls first. */
export async function take<T>(iterator: AsyncIterator<T>, count: number): Promise<T[]> {
  const items: T[] = [];
  while (items.length < count) {
    const result = await nextWithin(iterator);
    if (result.done === true) return expect.fail(`iterator ended after ${items.length} of ${count} items`);
    items.push(result.value);
  }
  return items;
}

/** The iterator of an async iterable, for stepping through it by hand. */
export function iteratorOf<T>(iterable: AsyncIterable<T>): AsyncIterator<T> {
  return iterable[Symbol.asyncIterator]();
}
