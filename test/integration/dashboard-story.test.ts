import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterEach, describe, expect, it } from 'vitest';
import { chromiumGuard } from '../fixtures/chromium.js';
import { dashboardBrowserSession } from '../fixtures/dashboard-browser-session.js';
import { seedStory, storyHub, type StoryParts } from '../fixtures/dashboard-story-scene.js';
import type { HttpHub } from '../fixtures/http-hub.js';

const SCREENSHOTS = fileURLToPath(new URL('../../.tmp/screenshots/story/', import.meta.url));
const AXE_SOURCE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const hasChromium = chromiumGuard('dashboard story');

const VIEWPORTS = [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;

/** The page's globals the tests read (the test files are compiled without the DOM library). */
interface PageGlobals {
  readonly document: {
    readonly activeElement: { readonly id: string; getAttribute(name: string): string | null } | null;
  };
}

interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: readonly { readonly target: readonly string[] }[];
}

/** Runs axe-core on the page as it stands; the serious and critical violations, described. */
async function seriousViolations(page: Page): Promise<string[]> {
  const source = await readFile(AXE_SOURCE, 'utf8');
  await page.evaluate(source);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<unknown> } })
      .axe;
    const page = (globalThis as unknown as { document: unknown }).document;
    const result = (await axe.run(page, { resultTypes: ['violations'] })) as {
      violations: AxeViolation[];
    };
    return result.violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

async function shoot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: false });
}

describe.runIf(hasChromium)('dashboard - the story of a team', () => {
  const session = dashboardBrowserSession();
  const { problems } = session;
  const repos: StoryParts[] = [];
  afterEach(async () => {
    for (const parts of repos.splice(0)) await parts.remove();
  });

  async function open(viewport: { width: number; height: number }): Promise<{
    page: Page;
    hub: HttpHub;
    parts: StoryParts;
    seeded: Awaited<ReturnType<typeof seedStory>>;
  }> {
    const { options, parts } = await storyHub();
    repos.push(parts);
    const { hub, page } = await session.open({ viewport, hub: options });
    const seeded = await seedStory(hub, parts);
    await page.reload();
    await page.locator('#feed-status[data-status="live"]').waitFor({ timeout: 5_000 });
    return { page, hub, parts, seeded };
  }

  for (const vp of VIEWPORTS) {
    it(`tells what the agents did, at ${vp.width}×${vp.height}`, { timeout: 90_000 }, async () => {
      const { page, hub, seeded } = await open(vp);

      // Overview: every card says what its agent is doing, in words.
      const alice = page.locator('#agents').getByText('npx vitest run test/retry.test.ts');
      await alice.first().waitFor({ timeout: 5_000 });
      await expect(
        page.locator('#agents').getByText('May I run rm -rf dist?').count(),
      ).resolves.toBeGreaterThan(0);
      // The retried, dead-lettered and finally acked message keeps its episode visible in the log.
      const retried = page.locator(`#log .log-row.was-dead`);
      await retried.first().waitFor({ timeout: 5_000 });
      await expect(retried.first().locator('.log-body').innerText()).resolves.toContain('retry change');
      // Every row has a preview, acked ones too.
      expect(await page.locator('#log .log-row .no-preview').count()).toBe(0);
      await shoot(page, `${vp.name}-overview`);
      expect(await seriousViolations(page)).toEqual([]);

      // An agent's card opens its turns; a turn opens its transcript, streaming while it runs.
      await page.getByRole('button', { name: 'alice: open turns' }).click();
      const turns = page.locator('[data-testid="agent-turns"]');
      await turns.waitFor();
      await turns.locator('#turn-list li.turn-item').nth(2).waitFor();
      await expect(turns.locator('#turn-list li.turn-item').count()).resolves.toBe(3);
      await turns
        .locator(`#turn-list li.turn-item[data-turn="${seeded.running.id}"] > button.turn-row`)
        .click();
      const transcript = page.locator(`[data-testid="transcript"][data-turn="${seeded.running.id}"]`);
      await transcript.waitFor();
      await transcript.getByText('npx vitest run test/retry.test.ts').first().waitFor();
      seeded.running.onEvent({
        type: 'tool_result',
        callId: 'r1',
        isError: true,
        output: '1 failed: timeout in retry.test.ts',
      });
      seeded.running.onEvent({ type: 'message', text: 'The timeout is too short; raising it.' });
      await transcript.getByText('The timeout is too short; raising it.').waitFor({ timeout: 5_000 });
      await transcript.getByText('1 failed: timeout in retry.test.ts').waitFor();
      await shoot(page, `${vp.name}-transcript`);
      expect(await seriousViolations(page)).toEqual([]);
      await page.keyboard.press('Escape');
      await page.keyboard.press('Escape');
      await expect(page.locator('#drawer').isVisible()).resolves.toBe(false);

      // A message opens to its envelope and whole history.
      await retried.first().click();
      const detail = page.locator(`[data-testid="message-detail"][data-message="${seeded.retriedId}"]`);
      await detail.waitFor();
      const history = detail.locator('#message-history');
      const dead = history.locator('li.hstep[data-kind="dead_lettered"]');
      await dead.waitFor();
      await expect(dead.innerText()).resolves.toContain('reviewer crashed twice');
      expect(
        await history.locator('li.hstep').evaluateAll((li) => li.map((n) => n.getAttribute('data-kind'))),
      ).toEqual([
        'sent',
        'claimed',
        'nacked',
        'claimed',
        'dead_lettered',
        'escalated',
        'requeued',
        'claimed',
        'acked',
      ]);
      const steps = await history.locator('li.hstep').allInnerTexts();
      expect(steps.length).toBeGreaterThanOrEqual(7);
      await expect(detail.locator('#message-body').innerText()).resolves.toContain(
        'Could you look at the retry change?',
      );
      await shoot(page, `${vp.name}-message`);
      expect(await seriousViolations(page)).toEqual([]);
      await page.keyboard.press('Escape');

      // The human inbox: results, replies and escalations, with reply.
      await page.locator('#tab-inbox').click();
      const inbox = page.locator('#inbox');
      await inbox.getByText('README and docs/bridging.md updated').waitFor();
      await inbox.getByText('Round 2 is green.').first().waitFor();
      const result = inbox.locator('.inbox-item[data-kind="result"]');
      await result.locator('.inbox-reply-text').fill('Thanks, ship it');
      await result.getByRole('button', { name: 'Reply' }).click();
      await expect
        .poll(async () => (await hub.bus.peek('yadoran')).map((m) => m.envelope.body), { timeout: 5_000 })
        .toContain('Thanks, ship it');
      await shoot(page, `${vp.name}-inbox`);
      expect(await seriousViolations(page)).toEqual([]);

      // The timeline: a lane per agent, turns as bars, cost charts.
      await page.locator('#tab-timeline').click();
      const timeline = page.locator('#timeline');
      await timeline.locator('svg').first().waitFor();
      await expect(timeline.getByText('alice').count()).resolves.toBeGreaterThan(0);
      await expect(timeline.getByText('bob').count()).resolves.toBeGreaterThan(0);
      await page.locator('#cost-charts svg').first().waitFor();
      await shoot(page, `${vp.name}-timeline`);
      expect(await seriousViolations(page)).toEqual([]);

      expect(problems).toEqual([]);
    });
  }

  it('starts a run from the page and opens it to its subtasks', { timeout: 90_000 }, async () => {
    const { page } = await open({ width: 1440, height: 900 });
    await page.locator('#tab-runs').click();
    await page.locator('#run-goal').fill('- write a.txt A\n- write b.txt B');
    await page.locator('#run-agent').fill('scripted');
    await page.locator('#run-start').click();
    // The new run opens in the drawer and is listed behind it.
    const detail = page.locator('[data-testid="run-detail"]');
    await detail.waitFor({ timeout: 10_000 });
    await detail.getByText('succeeded').first().waitFor({ timeout: 30_000 });
    await expect(page.locator('#run-list li.run-card').count()).resolves.toBe(1);
    await expect(detail.locator('#run-subtasks tr[data-subtask]').count()).resolves.toBeGreaterThanOrEqual(2);
    await shoot(page, 'desktop-run');
    // A subtask's attempts open its turn's delivery on the bus: sent, claimed, acked.
    await detail
      .getByRole('button', { name: /^1 attempt of \S+-implement-sub1: open its delivery history$/ })
      .click();
    const delivery = page.locator('[data-testid="message-detail"]');
    await delivery.locator('#message-history li').nth(2).waitFor({ timeout: 10_000 });
    await expect(delivery.locator('#message-history').innerText()).resolves.toMatch(/claimed[\s\S]*acked/i);
    await shoot(page, 'desktop-run-delivery');
    expect(await seriousViolations(page)).toEqual([]);
    expect(problems).toEqual([]);
  });

  it(
    'says a run whose only edit was refused changed nothing, with the reason (#34 item 6)',
    { timeout: 90_000 },
    async () => {
      const { page } = await open({ width: 1440, height: 900 });
      await page.locator('#tab-runs').click();
      await page.locator('#run-goal').fill('- try write ../outside.txt hi');
      await page.locator('#run-agent').fill('scripted');
      await page.locator('#run-start').click();
      const detail = page.locator('[data-testid="run-detail"]');
      await detail.waitFor({ timeout: 10_000 });
      await detail.locator('.run-status[data-status="no-change"]').waitFor({ timeout: 30_000 });
      await expect(detail.locator('.run-status').first().innerText()).resolves.toContain('no change');
      await expect(detail.locator('.run-reason').innerText()).resolves.toMatch(
        /^no subtask changed a file \(\S+-implement-sub1: write \.\.\/outside\.txt: PATH_OUTSIDE_CWD/,
      );
      await expect(detail.getByRole('button', { name: /resume run/ }).count()).resolves.toBe(0);
      expect(problems).toEqual([]);
    },
  );

  it('can be used with the keyboard alone', { timeout: 60_000 }, async () => {
    const { page } = await open({ width: 1440, height: 900 });
    // The view tabs are reachable by Tab and switch with Enter.
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(
        () => (globalThis as unknown as PageGlobals).document.activeElement?.id === 'tab-inbox',
      );
    }
    expect(reached).toBe(true);
    await page.keyboard.press('Enter');
    await page.locator('#view-inbox').waitFor({ state: 'visible' });
    // An agent's turns open from the keyboard and Escape brings the focus back.
    await page.locator('#tab-overview').click();
    const opener = page.getByRole('button', { name: 'alice: open turns' });
    await opener.focus();
    await page.keyboard.press('Enter');
    await page.locator('[data-testid="agent-turns"]').waitFor();
    await page.keyboard.press('Escape');
    await expect(
      page.evaluate(() =>
        (globalThis as unknown as PageGlobals).document.activeElement?.getAttribute('aria-label'),
      ),
    ).resolves.toBe('alice: open turns');
  });
});
