// IGNITE queue monitor failures: retry headers and backoff, dead letters and escalation, unknown agents, a second monitor.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { backoffMs } from '../../src/gateways/ignite/failure-path.js';
import type { FakeIgniteRunners } from '../fakes/fake-ignite-runner.js';
import { waitFor } from '../fakes/fake-cli-harness.js';
import { igniteMonitorSession, mimeHeader as header } from '../fixtures/ignite-monitor-session.js';
import type { IgniteWorkspace } from '../fixtures/ignite-workspace.js';

describe('ignite queue monitor', () => {
  let ws: IgniteWorkspace;
  let runners: FakeIgniteRunners;
  const { monitors, open, start, task, close } = igniteMonitorSession();

  beforeEach(async () => {
    ({ ws, runners } = await open());
  });
  afterEach(close);

  it('writes F4-shaped retry headers after a failed turn and waits for Next-Retry-After (59, 60)', async () => {
    runners.behaviour = (t) => (runners.turns.indexOf(t) === 0 ? { isFailure: true } : {});
    await start({ env: { RETRY_BASE_DELAY: '0.4', RETRY_MAX_DELAY: '2' }, random: () => 0.999 });
    const path = await task('ignitian_1', 'retry');
    const name = path.slice(path.lastIndexOf('/') + 1);
    await waitFor(
      async () =>
        header(await ws.read(join(ws.processed('ignitian_1'), name)).catch(() => ''), 'X-IGNITE-Status') ===
        'retrying',
      2000,
      'retrying',
    );
    const text = await ws.read(join(ws.processed('ignitian_1'), name));
    const names = text
      .split('\n\n')[0]
      ?.split('\n')
      .map((l) => l.slice(0, l.indexOf(':')));
    expect(names?.slice(-6)).toEqual([
      'Content-Transfer-Encoding',
      'X-IGNITE-Status',
      'X-IGNITE-Processed-At',
      'X-IGNITE-Retry-Count',
      'X-IGNITE-Last-Retry-At',
      'X-IGNITE-Next-Retry-After',
    ]);
    expect(header(text, 'X-IGNITE-Retry-Count')).toBe('1');
    await waitFor(() => runners.turns.length === 2, 3000, 'retried');
    const gap = (runners.turns[1]?.startedAt ?? 0) - (runners.turns[0]?.startedAt ?? 0);
    expect(gap).toBeGreaterThanOrEqual(395);
    for (let n = 0; n < 10; n++) {
      for (const r of [0, 0.5, 0.9999]) {
        const b = backoffMs(n, 5000, 300_000, () => r);
        expect(b).toBeGreaterThanOrEqual(0);
        expect(b).toBeLessThanOrEqual(Math.min(300_000, 5000 * 2 ** n));
        expect(b % 1000).toBe(0);
      }
    }
  });

  it('dead-letters after 1 + DLQ_MAX_RETRIES failures with a complete escalation (61, 62, 63, 64)', async () => {
    runners.behaviour = (t) => (t.agent === 'ignitian_2' ? { isFailure: true } : { isDeleting: false });
    await start();
    const path = await ws.send({
      from: 'coordinator',
      to: 'ignitian_2',
      type: 'task_assignment',
      body: 'type: task_assignment\nfrom: coordinator\npayload:\n  task_id: "task_009"\n  title: "T \\"9\\""\n',
    });
    const name = path.slice(path.lastIndexOf('/') + 1);
    const dlq = join(ws.rt, 'queue', 'dead_letter');
    // The monitor writes the dead-letter entry and the escalation, then removes the processed file: the
    // leader's turn can start before that removal, so wait for all three.
    await waitFor(
      async () =>
        (await ws.list(dlq)).length === 1 &&
        runners.turnsOf('leader').length === 1 &&
        (await ws.list(ws.processed('ignitian_2'))).length === 0,
      5000,
      'dead letter, escalation and the processed file removed',
    );
    expect(runners.turnsOf('ignitian_2')).toHaveLength(4);
    const [entryName = ''] = await ws.list(dlq);
    expect(entryName).toMatch(new RegExp(`^${name.replace('.mime', '')}_dlq_\\d{10}\\.mime$`));
    const entry = await ws.read(join(dlq, entryName));
    expect(entry).toMatch(
      /^MIME-Version: 1\.0\nMessage-ID: <\d+\.\d+\.\d+@ignite\.local>\nFrom: queue_monitor\nTo: leader\nDate: .*\nX-IGNITE-Type: dead_letter\nX-IGNITE-Priority: critical\nX-IGNITE-Status: dead_letter\n/,
    );
    const body = entry.slice(entry.indexOf('\n\n') + 2);
    expect(body).toMatch(
      new RegExp(
        `^original_file: "${name}"\nfailure_info:\n  retry_count: 3\n  max_retries: 3\n  last_error: "delivery failed after 3 retries"\n  moved_at: "[^"]+"\noriginal_message: \\|\n  MIME-Version: 1\\.0\n`,
      ),
    );
    expect(body).toContain('\n  X-IGNITE-Retry-Count: 3\n');
    expect(body).toContain('\n  \n  type: task_assignment\n');
    expect(body.endsWith('\n')).toBe(false);
    const escalation = await ws.read(runners.turnsOf('leader')[0]?.file ?? '');
    expect(escalation.slice(escalation.indexOf('\n\n') + 2)).toBe(
      [
        'task_id: "task_009"',
        'title: "T \\"9\\""',
        'original_assignee: "ignitian_2"',
        'failure_reason: "delivery failed after 3 retries"',
        'retry_count: 3',
        'max_retries: 3',
        'recommended_action: "manual_review"',
        `dlq_path: "${dlq}/"`,
        'notes: "リトライ上限に到達したためエスカレーションします"',
      ].join('\n'),
    );
    expect(header(escalation, 'X-IGNITE-Type')).toBe('escalation');
    expect(runners.turnsOf('leader')[0]?.file).toMatch(/\/escalation_\d{16}\.mime$/);
    const dead = await monitors[0]?.bus.listDeadLetters({ mailbox: 'ignitian_2' });
    expect(dead).toHaveLength(1);
  });

  it('fails an unknown ignitian_x with 未知のエージェント and dead-letters it (68)', async () => {
    await mkdir(ws.root('ignitian_x'));
    await start();
    await task('ignitian_x', 'x');
    await waitFor(
      async () => (await ws.list(join(ws.rt, 'queue', 'dead_letter'))).length === 1,
      5000,
      'dead letter',
    );
    expect(runners.turnsOf('ignitian_x')).toHaveLength(0);
  });

  it('refuses a second monitor on the same runtime dir (67)', async () => {
    await start();
    await expect(start()).rejects.toMatchObject({
      code: 'GATEWAY_UNAVAILABLE',
      message: 'queue_monitor は既に稼働中です（flock取得失敗）',
    });
    monitors.pop();
  });
});
