import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BudgetGuard } from '../../src/agents/budget/budget-guard.js';
import { ConcurrencyLimiter } from '../../src/agents/concurrency/concurrency-limiter.js';
import { createAgentRunner } from '../../src/agents/create-agent-runner.js';
import { ChildReaper } from '../../src/agents/process/child-reaper.js';
import { isMusubiError } from '../../src/core/errors.js';
import { MemoryStore } from '../../src/store/memory/memory-store.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { fakeParentEnv, makeTempDir } from '../fakes/fake-cli-harness.js';

describe('agent concurrency limits and budgets', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let store: MemoryStore;
  const reaper = new ChildReaper();
  beforeEach(async () => {
    ({ dir, cleanup } = await makeTempDir());
    store = new MemoryStore({ clock: new FakeClock() });
  });
  afterEach(async () => {
    await store.close();
    await cleanup();
  });

  it('runs at most the backend limit of turns at once and queues the rest in order', async () => {
    const limiter = new ConcurrencyLimiter({ limits: { claude: 2 } });
    const runner = createAgentRunner({
      backend: 'claude',
      env: fakeParentEnv(),
      extraEnv: { FAKE_AGENT_DELAY_MS: '150' },
      reaper,
      limiter,
    });
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const turns = [0, 1, 2, 3, 4].map((i) =>
      runner
        .run({
          prompt: `turn ${i}`,
          cwd: dir,
          timeoutMs: 10_000,
          onEvent: (e) => {
            if (e.type !== 'started') return;
            order.push(i);
            running++;
            peak = Math.max(peak, running);
          },
        })
        .then((r) => {
          running--;
          return r;
        }),
    );
    const results = await Promise.all(turns);
    expect(results.every((r) => r.exitCode === 0)).toBe(true);
    expect(peak).toBe(2);
    // Slots go out in order (unit-tested in concurrency-limiter.test.ts); turns 2 and 3 get theirs when
    // 0 and 1 end, which can be the same moment, so their processes may report their start either way.
    expect(order.slice(0, 2).sort()).toEqual([0, 1]);
    expect(order.slice(2, 4).sort()).toEqual([2, 3]);
    expect(order[4]).toBe(4);
    expect(limiter.active('claude')).toBe(0);
  });

  it('a canceled wait for a slot starts nothing', async () => {
    const limiter = new ConcurrencyLimiter({ defaultLimit: 1 });
    const runner = createAgentRunner({
      backend: 'codex',
      env: fakeParentEnv(),
      extraEnv: { FAKE_AGENT_DELAY_MS: '200' },
      reaper,
      limiter,
    });
    const controller = new AbortController();
    const first = runner.run({ prompt: 'a', cwd: dir, timeoutMs: 10_000 });
    const second = runner.run({ prompt: 'b', cwd: dir, timeoutMs: 10_000, signal: controller.signal });
    expect(limiter.waiting('codex')).toBe(1);
    controller.abort();
    expect(await second).toMatchObject({ canceled: true, exitCode: null });
    expect(await first).toMatchObject({ exitCode: 0 });
  });

  it('records usage per agent in the store and refuses a run once the team budget is spent, before any process starts', async () => {
    const guard = new BudgetGuard({
      kv: store,
      events: { publish: (e) => store.appendEvent(e) },
      team: 'alpha',
      limits: { maxCostUsd: 0.02, maxRunTokens: 10, maxRunCostUsd: 0.5 },
    });
    const pidFile = join(dir, 'pids');
    const runner = createAgentRunner({
      backend: 'claude',
      env: fakeParentEnv(),
      extraEnv: {
        FAKE_AGENT_COST_USD: '0.015',
        FAKE_AGENT_PID_FILE: pidFile,
        FAKE_AGENT_RECORD: join(dir, 'record.json'),
      },
      reaper,
      budget: { guard, agent: 'yadon-1' },
    });
    await runner.run({ prompt: 'one', cwd: dir, timeoutMs: 10_000 });
    await runner.run({ prompt: 'two', cwd: dir, timeoutMs: 10_000 });
    expect(JSON.parse(await readFile(join(dir, 'record.json'), 'utf8'))).toMatchObject({
      argv: expect.arrayContaining(['--max-budget-usd', '0.5']),
    });
    const processesStarted = async (): Promise<number> =>
      (await readFile(pidFile, 'utf8')).trim().split('\n').length;
    expect(await processesStarted()).toBe(2);
    const err: unknown = await runner
      .run({ prompt: 'three', cwd: dir, timeoutMs: 10_000 })
      .catch((e: unknown) => e);
    expect(isMusubiError(err, 'BUDGET_EXCEEDED')).toBe(true);
    expect(await processesStarted()).toBe(2);

    const row = await store.kvGet('budget/alpha/yadon-1');
    expect(row?.value).toMatchObject({ runs: 2, costUsd: 0.03 });
    const types = (await store.readEvents()).map((e) => e.type);
    expect(types.filter((t) => t === 'budget.spent')).toHaveLength(2);
    expect(types).toContain('budget.run_exceeded');
    expect(types.at(-1)).toBe('budget.refused');
  });
});
