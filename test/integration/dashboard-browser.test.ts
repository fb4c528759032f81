import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { chromiumGuard } from '../fixtures/chromium.js';
import { dashboardBrowserSession } from '../fixtures/dashboard-browser-session.js';
import { seedDashboardScene } from '../fixtures/dashboard-scene.js';
import type { HttpHub, HttpHubOptions } from '../fixtures/http-hub.js';

const SCREENSHOTS = fileURLToPath(new URL('../../.tmp/screenshots/', import.meta.url));
const hasChromium = chromiumGuard('dashboard browser');

describe.runIf(hasChromium)('dashboard - browser', () => {
  const session = dashboardBrowserSession();
  const { problems } = session;
  const open = (hub: HttpHubOptions = {}): Promise<{ hub: HttpHub; page: Page }> =>
    session.open({ hub, locale: 'ja-JP' });

  it('shows an empty state, not an error, when no agent is known', async () => {
    const { page } = await open();
    await expect(page.locator('[data-testid="agents-empty"]').textContent()).resolves.toContain(
      'No agents yet',
    );
    expect(await page.locator('.toast-error').count()).toBe(0);
    expect(await page.locator('#dead-letters').textContent()).toContain('No dead letters');
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-empty.png') });
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('says once that it needs its token when opened without it, and goes live from the /?token= URL', async () => {
    const token = 'browser-token-0123456789abcdef';
    const { hub, page } = await session.open({
      hub: { token },
      readySelector: '[data-testid="token-needed"]',
    });
    expect(await page.locator('[data-testid="token-needed"]').textContent()).toContain(
      'This hub needs its token',
    );
    // One notice instead of an error per panel; the views are hidden behind it.
    expect(await page.locator('.toast-error').count()).toBe(0);
    expect(await page.locator('#view-overview').isHidden()).toBe(true);
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-token-needed.png') });
    await page.goto(`${hub.base}/?token=${token}`);
    await page.locator('#feed-status[data-status="live"]').waitFor({ timeout: 5_000 });
    // The token left the address bar; the cookie carries it from now on.
    expect(page.url()).toBe(`${hub.base}/`);
    expect(await page.locator('[data-testid="agents-empty"]').isVisible()).toBe(true);
    expect(problems.filter((p) => !p.includes('401'))).toEqual([]);
  });

  it('shows a message sent on the bus within a second', async () => {
    const { hub, page } = await open();
    const { envelope } = await hub.bus.send({
      from: 'alice',
      to: 'bob',
      type: 'review_request',
      thread: 'pr-7',
      body: 'レビューお願いします',
    });
    const started = Date.now();
    const row = page.locator(`.log-row[data-message="${envelope.id}"]`);
    await row.waitFor({ timeout: 1_000 });
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(await row.textContent()).toContain('alice');
    await expect.poll(() => row.textContent(), { timeout: 2_000 }).toContain('レビューお願いします');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('retries a dead letter from its button', async () => {
    const { hub, page } = await open();
    const { envelope } = await hub.bus.send({ from: 'lead', to: 'worker', type: 'job' });
    const d = await hub.bus.receive('worker', { timeoutMs: 0 });
    await hub.bus.nack(d?.deliveryId ?? '', { reason: 'worker crashed' });
    const item = page.locator(`.dead[data-message="${envelope.id}"]`);
    await item.waitFor({ timeout: 2_000 });
    await item.getByRole('button', { name: `retry ${envelope.id}` }).click();
    await page.locator('#dead-letters .empty-line.ok').waitFor({ timeout: 2_000 });
    expect((await hub.bus.count('worker')).ready).toBe(1);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('discards a dead letter from its button after a confirmation, and the log shows it', async () => {
    const { hub, page } = await open();
    const ids: string[] = [];
    for (const type of ['job', 'other-job']) {
      const { envelope } = await hub.bus.send({ from: 'lead', to: 'worker', type });
      const d = await hub.bus.receive('worker', { timeoutMs: 0 });
      await hub.bus.deadLetter(d?.deliveryId ?? '', 'worker crashed');
      ids.push(envelope.id);
    }
    const [gone = '', kept = ''] = ids;
    const item = page.locator(`.dead[data-message="${gone}"]`);
    await item.waitFor({ timeout: 2_000 });
    const button = item.getByRole('button', { name: `discard ${gone}` });
    const questions: string[] = [];
    page.once('dialog', (dialog) => {
      questions.push(dialog.message());
      void dialog.dismiss();
    });
    await button.click();
    await expect.poll(() => questions.length, { timeout: 2_000 }).toBe(1);
    expect(questions[0]).toContain(gone);
    expect((await hub.bus.listDeadLetters()).map((l) => l.envelope.id)).toEqual([gone, kept]);

    page.once('dialog', (dialog) => void dialog.accept());
    await button.click();
    await item.waitFor({ state: 'detached', timeout: 2_000 });
    expect((await hub.bus.listDeadLetters()).map((l) => l.envelope.id)).toEqual([kept]);
    await page.locator(`.dead[data-message="${kept}"]`).waitFor({ timeout: 1_000 });
    const row = page.locator(`.log-row[data-message="${gone}"] .status`);
    await expect.poll(() => row.textContent(), { timeout: 2_000 }).toBe('discarded');
    expect(await page.locator('.toast-error').count()).toBe(0);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('cancels a running task from the task HUD', async () => {
    const { hub, page } = await open();
    await hub.tasks.put({
      id: 'task-42',
      state: 'running',
      title: 'ドキュメントを翻訳する',
      progress: 0.3,
      createdAt: Date.now(),
    });
    const task = page.locator('.task[data-task="task-42"]');
    await task.getByRole('button', { name: 'cancel task task-42' }).click();
    await page.locator('.task.task-cancelled[data-task="task-42"]').waitFor({ timeout: 2_000 });
    expect(hub.tasks.get('task-42')?.state).toBe('cancelled');
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it('reconnects after its gateway restarts on the same port and shows what was sent meanwhile', async () => {
    const { hub, page } = await open();
    await hub.gateway.stop();
    await page.locator('#feed-status[data-status="reconnecting"]').waitFor({ timeout: 3_000 });
    const { envelope } = await hub.bus.send({ from: 'alice', to: 'bob', type: 'while_away' });
    const again = session.sameGateway(hub);
    await again.start();
    try {
      await page.locator(`.log-row[data-message="${envelope.id}"]`).waitFor({ timeout: 5_000 });
      await page.locator('#feed-status[data-status="live"]').waitFor({ timeout: 2_000 });
    } finally {
      await page.context().close();
      await again.stop();
    }
  });

  it('renders a busy team readably in light and dark (screenshots)', async () => {
    const { hub, page } = await open({
      teams: [
        {
          list: async () => [
            {
              id: 'docs-squad',
              pattern: 'three-phase',
              phase: 'docs',
              round: 1,
              phases: ['implement', 'docs', 'review'],
              members: ['yadoran', 'yadon-1', 'yadon-2'],
              goal: 'README を日本語と英語で整える',
            },
          ],
        },
      ],
    });
    const ids = await seedDashboardScene(hub);
    await page.locator(`.log-row[data-message="${ids.lastMessageId}"]`).waitFor({ timeout: 3_000 });
    await page.locator('.agent-card').nth(4).waitFor({ timeout: 3_000 });
    await page.locator('.team-card[data-team="peers"] .step.current').waitFor({ timeout: 3_000 });
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-light.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-dark.png'), fullPage: true });
    expect(await page.locator('.agent-card').count()).toBe(5);
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
