import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSystemClock } from '../../src/core/clock.js';
import { configSchema } from '../../src/core/config.schema.js';
import { createIdGenerator } from '../../src/core/ids.js';
import { createSilentLogger } from '../../src/core/logger.js';
import { DASHBOARD_FILES } from '../../src/gateways/http/dashboard-assets.js';
import { agentSocketPath } from '../../src/gateways/yadon/yadon-paths.js';
import type { Hub } from '../../src/hub/hub.js';
import { startConfiguredHub } from '../../src/hub/start-configured-hub.js';
import type { TaskRecord } from '../../src/tasks/task-record.js';
import { waitFor } from '../fakes/fake-cli-harness.js';
import { chromiumGuard, launchChromium } from '../fixtures/chromium.js';
import { buildDashboard, type BuiltDashboard } from '../fixtures/dashboard-build.js';
import { liveChildPids } from '../fixtures/process-children.js';
import { ask } from '../fixtures/yadon-harness.js';
import { waitForFile } from '../fixtures/yadon-jobs-session.js';

const SCREENSHOTS = fileURLToPath(new URL('../../.tmp/screenshots/', import.meta.url));
const hasChromium = chromiumGuard('dashboard yadon browser');

describe.runIf(hasChromium)('dashboard - the yadon agents and tasks of musubi up (browser)', () => {
  let browser: Browser | undefined;
  let assets: BuiltDashboard | undefined;
  const cleanups: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    [browser, assets] = await Promise.all([launchChromium(), buildDashboard()]);
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  afterAll(async () => {
    await browser?.close();
    await assets?.remove();
  });

  /** Whether an agent turn waiting for the file `name` (waitForFile) still runs as a child of the test. */
  const isTurnAlive = (name: string): boolean =>
    liveChildPids().some((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`existsSync("${name}")`);
      } catch {
        return false; // exited meanwhile
      }
    });

  /** `musubi up` with yadon (2 scripted workers) and the dashboard enabled, as startConfiguredHub builds it. */
  async function startUp(): Promise<{ hub: Hub; socketDir: string; base: string; login: string }> {
    const dir = await mkdtemp('/tmp/dby-');
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const socketDir = join(dir, 's');
    const config = configSchema.parse({
      store: `sqlite:${join(dir, 'bus.db')}`,
      log: { level: 'silent' },
      gateways: {
        yadon: { enabled: true, socketDir, workers: 2, workDir: dir },
        http: { enabled: true, port: 0 },
      },
    });
    const clock = createSystemClock();
    const hub = await startConfiguredHub({
      config,
      cwd: dir,
      env: { PATH: process.env['PATH'] ?? '', LLM_BACKEND: 'scripted', XDG_RUNTIME_DIR: dir },
      logger: createSilentLogger(),
      clock,
      ids: createIdGenerator(clock),
      installed: new Set(),
    });
    cleanups.push(() => hub.close());
    const http = hub.byKind.http;
    const address = http?.address();
    if (http === undefined || address?.kind !== 'tcp') throw new Error('the dashboard should listen on TCP');
    // The address `musubi up` prints: with the hub's token, which logs the page in.
    return { hub, socketDir, base: `http://127.0.0.1:${address.port}`, login: http.loginUrl() };
  }

  /** Opens the dashboard of `base`, its files served from this test's fresh build (dist/ may be stale). */
  async function openDashboard(base: string, login: string): Promise<{ page: Page; problems: string[] }> {
    if (browser === undefined || assets === undefined) throw new Error('the suite has not started yet');
    const dir = assets.dir;
    const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    cleanups.push(() => context.close());
    const page = await context.newPage();
    await page.route(
      // The login URL (`/?token=`) goes to the hub, which sets the token cookie and redirects to `/`.
      (url) =>
        url.origin === base && DASHBOARD_FILES[url.pathname] !== undefined && !url.searchParams.has('token'),
      (route) => {
        const file = DASHBOARD_FILES[new URL(route.request().url()).pathname];
        return route.fulfill({ path: join(dir, file?.file ?? 'index.html'), contentType: file?.type ?? '' });
      },
    );
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    await page.goto(login);
    await page.locator('#feed-status[data-status="live"]').waitFor({ timeout: 5_000 });
    return { page, problems };
  }

  it('shows yadoran and yadon-N as agents and a yadon task that its Cancel button stops', async () => {
    const { hub, socketDir, base, login } = await startUp();
    const { page, problems } = await openDashboard(base, login);
    for (const name of ['yadoran', 'yadon-1', 'yadon-2']) {
      const card = page.locator(`.agent-card.state-idle[data-agent="${name}"]`);
      await card.waitFor({ timeout: 5_000 });
      expect(await card.locator('.proto').textContent()).toBe('yadon');
    }

    const reply = ask(agentSocketPath(socketDir, 'yadon-1'), {
      type: 'task',
      id: 'long-1',
      payload: { instruction: waitForFile('never') },
    });
    let row: TaskRecord | undefined;
    await waitFor(
      async () => {
        row = (await hub.tasks.list({ owner: 'yadon', states: ['running'] }))[0];
        return row !== undefined;
      },
      15_000,
      'the running yadon task',
    );
    const id = row?.id ?? '';
    await waitFor(() => isTurnAlive('never'), 10_000, 'the agent turn to start');
    const task = page.locator(`.task.task-running[data-task="${id}"]`);
    await task.waitFor({ timeout: 5_000 });
    expect(await task.locator('.task-title').textContent()).toContain('long-1: run node');
    expect(await task.locator('.task-meta').textContent()).toContain('@yadon-1');
    await page.locator('.agent-card.state-busy[data-agent="yadon-1"]').waitFor({ timeout: 5_000 });
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-yadon.png'), fullPage: true });

    await task.getByRole('button', { name: `cancel task ${id}` }).click();
    await page.locator(`.task.task-cancelled[data-task="${id}"]`).waitFor({ timeout: 5_000 });
    expect(await reply).toEqual({
      type: 'error',
      from: 'yadon-1',
      message: 'タスクはキャンセルされました: long-1',
    });
    await page.locator('.agent-card.state-idle[data-agent="yadon-1"]').waitFor({ timeout: 5_000 });
    await waitFor(() => !isTurnAlive('never'), 10_000, 'the agent turn to stop');
    expect(await hub.tasks.get(id)).toMatchObject({ state: 'cancelled' });
    // The hub's turn log has the turn, with how it ended.
    const token = new URL(login).searchParams.get('token') ?? '';
    const authorization = { authorization: `Bearer ${token}` };
    const turns = (await (
      await fetch(`${base}/api/agents/yadon-1/turns`, { headers: authorization })
    ).json()) as {
      turns: { subtask?: string; state: string; backend: string }[];
    };
    expect(turns.turns[0]).toMatchObject({ subtask: 'long-1', state: 'cancelled', backend: 'scripted' });
    expect(problems).toEqual([]);
  });
});
