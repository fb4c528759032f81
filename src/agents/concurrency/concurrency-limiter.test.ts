import { describe, expect, it } from 'vitest';
import { ConcurrencyLimiter } from './concurrency-limiter.js';

describe('ConcurrencyLimiter', () => {
  it('grants waiting slots in the order they were asked for', async () => {
    const limiter = new ConcurrencyLimiter({ limits: { claude: 2 } });
    const granted: number[] = [];
    const releases = [0, 1, 2, 3, 4].map((i) =>
      limiter.acquire('claude').then((release) => {
        granted.push(i);
        return release;
      }),
    );
    const slot = async (i: number): Promise<() => void> => {
      const release = releases[i];
      if (release === undefined) throw new Error(`no turn ${i}`);
      return release;
    };
    const [first, second] = [await slot(0), await slot(1)];
    expect(granted).toEqual([0, 1]);
    expect(limiter.waiting('claude')).toBe(3);
    second();
    first();
    await slot(3);
    expect(granted).toEqual([0, 1, 2, 3]);
    (await slot(2))();
    (await slot(4))();
    expect(granted).toEqual([0, 1, 2, 3, 4]);
    (await slot(3))();
    expect(limiter.active('claude')).toBe(0);
  });

  it('drops an aborted wait from the queue and grants the next one instead', async () => {
    const limiter = new ConcurrencyLimiter({ defaultLimit: 1 });
    const release = await limiter.acquire('codex');
    const aborted = new AbortController();
    const waiting = limiter.acquire('codex', aborted.signal).catch((err: unknown) => err);
    const next = limiter.acquire('codex');
    aborted.abort(new Error('gone'));
    expect(await waiting).toEqual(new Error('gone'));
    release();
    (await next)();
    expect(limiter.active('codex')).toBe(0);
    expect(limiter.waiting('codex')).toBe(0);
  });
});
