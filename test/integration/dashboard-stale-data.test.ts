import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSystemClock } from '../../src/core/clock.js';
import { createSilentLogger } from '../../src/core/logger.js';
import { createHttpGateway } from '../../src/gateways/http/http-gateway.js';
import { chromiumGuard, launchChromium } from '../fixtures/chromium.js';
import { buildDashboard, type BuiltDashboard } from '../fixtures/dashboard-build.js';
import { startHttpHub, type HttpHub } from '../fixtures/http-hub.js';

const hasChromium = chromiumGuard('dashboard stale-data');

describe.runIf(hasChromium)('dashboard - stale data', () => {
  let browser: Browser;
  let assets: BuiltDashboard;
  const hubs: HttpHub[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    [browser, assets] = await Promise.all([launchChromium(), buildDashboard()]);
  });
  afterEach(async () => {
    await Promise.all(hubs.splice(0).map((h) => h.close()));
  });
  afterAll(async () => {
    await browser?.close();
    await assets?.remove();
  });

  async function open(): Promise<{ hub: HttpHub; page: Page }> {
    const hub = await startHttpHub({ assetsDir: assets.dir });
    hubs.push(hub);
    const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await context.newPage();
    problems.length = 0;
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    await page.goto(`${hub.base}/`);
    await page.locator('#feed-status[data-status="live"]').waitFor({ timeout: 5_000 });
    return { hub, page };
  }

  it('drops a lease that expires while the page is open, without a reload', async () => {
    const { hub, page } = await open();
    await hub.bus.send({ from: 'lead', to: 'eve', type: 'job' });
    await hub.bus.receive('eve', { timeoutMs: 0, leaseMs: 1_500 });
    const lease = page.locator('#queues .leases li');
    await lease.waitFor({ timeout: 3_000 });
    // Lease expiry is no bus event: only the page's periodic check can notice it.
    await lease.waitFor({ state: 'detached', timeout: 15_000 });
    const cells = page.locator('#queues tr[data-mailbox="eve"] td');
    await expect.poll(() => cells.nth(1).textContent(), { timeout: 2_000 }).toBe('1'); // ready
    expect(await cells.nth(3).textContent()).toBe('0'); // busy
    expect(await page.locator('.toast-error').count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('backs off and shows itself stale while the hub is down, then recovers on the same port', async () => {
    const { hub, page } = await open();
    const port = Number(new URL(hub.base).port);
    let streamRequests = 0;
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/api/events') streamRequests += 1;
    });
    await hub.gateway.stop();
    await page.locator('body.is-stale').waitFor({ timeout: 3_000 });
    await page.locator('#feed-status[data-status="reconnecting"]').waitFor({ timeout: 1_000 });
    expect(await page.locator('#feed-status .feed-since').textContent()).toMatch(/^since \d\d:\d\d:\d\d$/);

    // The browser on its own would retry every second (the stream's `retry: 1000`): about 6 here.
    streamRequests = 0;
    await page.waitForTimeout(6_000);
    expect(streamRequests).toBeLessThan(4);

    const { envelope } = await hub.bus.send({ from: 'alice', to: 'bob', type: 'while_away' });
    const again = createHttpGateway({
      bus: hub.bus,
      clock: createSystemClock(),
      logger: createSilentLogger(),
      port,
      assetsDir: assets.dir,
      agents: hub.agents,
      tasks: hub.tasks,
    });
    await again.start();
    try {
      // The back-off has grown to several seconds by now; the next attempt finds the hub again.
      await page.locator(`.log-row[data-message="${envelope.id}"]`).waitFor({ timeout: 20_000 });
      await page.locator('#feed-status[data-status="live"]').waitFor({ timeout: 2_000 });
      await page.locator('body:not(.is-stale)').waitFor({ timeout: 2_000 });
      expect(await page.locator('#feed-status .feed-since').count()).toBe(0);
      // Live again: a message sent now shows up through the stream.
      const { envelope: after } = await hub.bus.send({ from: 'alice', to: 'bob', type: 'back' });
      await page.locator(`.log-row[data-message="${after.id}"]`).waitFor({ timeout: 2_000 });
      // Only the refused connections of the outage may have been logged.
      expect(problems.filter((p) => !p.includes('ERR_CONNECTION_REFUSED'))).toEqual([]);
    } finally {
      await page.context().close();
      await again.stop();
    }
  }, 45_000);
});
