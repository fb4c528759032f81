import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { chromiumGuard } from '../fixtures/chromium.js';
import { dashboardBrowserSession } from '../fixtures/dashboard-browser-session.js';
import { seedDashboardScene } from '../fixtures/dashboard-scene.js';

const SCREENSHOTS = fileURLToPath(new URL('../../.tmp/screenshots/', import.meta.url));
const hasChromium = chromiumGuard('dashboard viewport');

/** What the layout looks like, measured in the page (CSS pixels). */
interface Measures {
  scrollWidth: number;
  topbarHeight: number;
  topbarPosition: string;
  body: { left: number; right: number; width: number; top: number };
  time: { top: number; bottom: number };
  log: { left: number; right: number };
  logPanelRight: number;
  sideLeft: number;
  sayWidth: number;
  stepperRight: number;
  stepperOverflowX: string;
}

describe.runIf(hasChromium)('dashboard - viewport sizes', () => {
  const session = dashboardBrowserSession();
  const { problems } = session;

  /** A hub with the screenshot scene plus a team with many long phases, shown at one viewport size. */
  async function open(width: number, height: number): Promise<{ page: Page; bodyRow: string }> {
    const { hub, page } = await session.open({
      viewport: { width, height },
      locale: 'ja-JP',
      hub: {
        teams: [
          {
            list: async () => [
              {
                id: 'release-train',
                pattern: 'pipeline',
                phase: 'INTEGRATION_TEST',
                round: 3,
                phases: [
                  'PLANNING',
                  'IMPLEMENTATION',
                  'INTEGRATION_TEST',
                  'DOCUMENTATION',
                  'REVIEW',
                  'RELEASE',
                ],
                members: ['alice', 'bob', 'carol'],
                goal: 'ship 1.4 with the new retry policy',
              },
            ],
          },
        ],
      },
    });
    const { lastMessageId } = await seedDashboardScene(hub);
    const bodyRow = `.log-row[data-message="${lastMessageId}"]`;
    await page.locator(bodyRow).waitFor({ timeout: 3_000 });
    // Attached, not visible: whether it is visible is what the tests measure.
    await page
      .locator(`${bodyRow} .log-body`)
      .filter({ hasText: 'LGTM' })
      .waitFor({ state: 'attached', timeout: 3_000 });
    await page.locator('.team-card[data-team="release-train"] .step.current').waitFor({ timeout: 3_000 });
    await page.locator('.team-card[data-team="peers"] .step.current').waitFor({ timeout: 3_000 });
    return { page, bodyRow };
  }

  /** Runs in the page; a string because the test's TypeScript has no DOM types. */
  const MEASURE = `(rowSelector) => {
    const rect = (selector) => {
      const node = document.querySelector(selector);
      if (node === null) throw new Error('missing ' + selector);
      return node.getBoundingClientRect();
    };
    const body = rect(rowSelector + ' .log-body');
    const time = rect(rowSelector + ' .log-time');
    const log = rect('#log');
    const stepper = '.team-card[data-team="release-train"] .stepper';
    return {
      scrollWidth: document.scrollingElement.scrollWidth,
      topbarHeight: rect('.topbar').height,
      topbarPosition: getComputedStyle(document.querySelector('.topbar')).position,
      body: { left: body.left, right: body.right, width: body.width, top: body.top },
      time: { top: time.top, bottom: time.bottom },
      log: { left: log.left, right: log.right },
      logPanelRight: rect('.area-log').right,
      sideLeft: rect('.area-side').left,
      sayWidth: rect('#say-text').width,
      stepperRight: rect(stepper).right,
      stepperOverflowX: getComputedStyle(document.querySelector(stepper)).overflowX,
    };
  }`;

  function measure(page: Page, bodyRow: string): Promise<Measures> {
    return page.evaluate<Measures>(`(${MEASURE})(${JSON.stringify(bodyRow)})`);
  }

  it('fits a 390×844 phone: no sideways scroll, a short top bar, message bodies inside the log', async () => {
    const { page, bodyRow } = await open(390, 844);
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-narrow-390-top.png') });
    await page.locator(bodyRow).scrollIntoViewIfNeeded();
    const m = await measure(page, bodyRow);
    expect(m.scrollWidth).toBeLessThanOrEqual(390);
    expect(m.topbarHeight).toBeLessThan(200);
    expect(m.body.width).toBeGreaterThan(100);
    expect(m.body.left).toBeGreaterThanOrEqual(0);
    expect(m.body.right).toBeLessThanOrEqual(390);
    expect(m.body.left).toBeGreaterThanOrEqual(m.log.left);
    expect(m.body.right).toBeLessThanOrEqual(m.log.right);
    expect(m.sayWidth).toBeGreaterThan(150);
    // The stepper scrolls inside its card instead of widening the page.
    expect(m.stepperRight).toBeLessThanOrEqual(390);
    expect(m.stepperOverflowX).toBe('auto');
    await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-narrow-390-log.png') });
    await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-narrow-390-full.png'), fullPage: true });
    expect(problems).toEqual([]);
  });

  it('keeps the wide 1440×900 layout: side column on the right, one line per message, sticky top bar', async () => {
    const { page, bodyRow } = await open(1440, 900);
    const m = await measure(page, bodyRow);
    expect(m.scrollWidth).toBeLessThanOrEqual(1440);
    expect(m.topbarPosition).toBe('sticky');
    expect(m.topbarHeight).toBeLessThan(100);
    expect(m.sideLeft).toBeGreaterThan(m.logPanelRight);
    // The body sits on the same line as the time, to its right.
    expect(m.body.top).toBeLessThan(m.time.bottom);
    expect(m.body.left).toBeGreaterThan(m.log.left + 400);
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-wide-1440.png') });
    expect(problems).toEqual([]);
  });
});
