import { describe, expect, it } from 'vitest';
import { chromiumGuard } from '../fixtures/chromium.js';
import { dashboardBrowserSession } from '../fixtures/dashboard-browser-session.js';

const hasChromium = chromiumGuard('dashboard stale-data');

describe.runIf(hasChromium)('dashboard - stale data', () => {
  const session = dashboardBrowserSession();
  const { problems, open } = session;

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
    const again = session.sameGateway(hub);
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
