import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentDirectory } from '../../src/bus/agent-directory.js';
import { createBus } from '../../src/bus/bus.js';
import { createSystemClock } from '../../src/core/clock.js';
import { createIdGenerator } from '../../src/core/ids.js';
import { createSilentLogger } from '../../src/core/logger.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { TaskRecord } from '../../src/tasks/task-record.js';
import { TaskRegistry } from '../../src/tasks/task-registry.js';
import { waitFor } from '../fakes/fake-cli-harness.js';
import { expectNoLiveChildren } from '../fixtures/process-children.js';
import { CLI_TEST_MS, yadon, yadonCliSession, yadonEnv } from '../fixtures/yadon-cli-session.js';
import { ask } from '../fixtures/yadon-harness.js';
import { waitForFile } from '../fixtures/yadon-jobs-session.js';

const { cleanups, dirs, close } = yadonCliSession();
afterEach(close);

/** What `musubi up` builds over the store: the task registry and agent directory the dashboard reads. */
function openHubSide(path: string) {
  const clock = createSystemClock();
  const store = SqliteStore.open({ path, clock, pollIntervalMs: 20 });
  const logger = createSilentLogger();
  const bus = createBus({
    store,
    clock,
    ids: createIdGenerator(clock),
    logger,
    config: { leaseMs: 30_000, retry: { baseMs: 10, capMs: 50, maxAttempts: 3 } },
  });
  const registry = new TaskRegistry({ bus, clock, logger });
  const directory = new AgentDirectory({ bus, clock });
  cleanups.push(async () => {
    await registry.close();
    await bus.close();
    await store.close();
  });
  return { registry, directory };
}

describe('yadon host beside a hub on one SQLite store', () => {
  it(
    "lists the host's agents and tasks in the hub's directory and registry, and a cancel there stops the turn",
    async () => {
      const { sock, work } = await dirs();
      const db = join(sock, 'bus.db');
      const env = yadonEnv(sock, { YADON_COUNT: '1', MUSUBI_STORE: `sqlite:${db}` });
      expect(await yadon(['host', work], work, env)).toMatchObject({ code: 0 });
      const hub = openHubSide(db);
      const states = async (): Promise<Record<string, string>> =>
        Object.fromEntries((await hub.directory.list()).map((a) => [a.name, `${a.protocol} ${a.state}`]));
      await waitFor(async () => Object.keys(await states()).length === 2, 10_000, 'the agents');
      expect(await states()).toEqual({ yadoran: 'yadon idle', 'yadon-1': 'yadon idle' });

      const pending = ask(join(sock, 'yadon-agent-yadon-1.sock'), {
        type: 'task',
        id: 'long',
        payload: { instruction: waitForFile('never') },
      });
      let row: TaskRecord | undefined;
      await waitFor(
        async () => {
          row = (await hub.registry.list({ owner: 'yadon', states: ['running'] }))[0];
          return row !== undefined;
        },
        15_000,
        'the running task in the registry',
      );
      expect(row).toMatchObject({ agent: 'yadon-1', params: { taskId: 'long' } });
      await waitFor(async () => (await states())['yadon-1'] === 'yadon busy', 10_000, 'yadon-1 busy');
      expect(await hub.registry.cancel(row?.id ?? '')).toMatchObject({ outcome: 'cancelled' });
      expect(await pending).toEqual({
        type: 'error',
        from: 'yadon-1',
        message: 'タスクはキャンセルされました: long',
      });
      await waitFor(async () => (await states())['yadon-1'] === 'yadon idle', 10_000, 'yadon-1 idle');

      expect(await yadon(['stop'], work, env)).toMatchObject({ code: 0 });
      await waitFor(
        async () => Object.values(await states()).every((s) => s === 'yadon offline'),
        10_000,
        'the agents offline',
      );
      await expectNoLiveChildren(10_000);
    },
    CLI_TEST_MS,
  );
});
