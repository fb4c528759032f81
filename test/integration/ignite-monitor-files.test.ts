// IGNITE queue monitor files: legacy YAML and non-canonical names, processed/ left unread, progress_update output.
import { mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FakeIgniteRunners } from '../fakes/fake-ignite-runner.js';
import { waitFor } from '../fakes/fake-cli-harness.js';
import { igniteMonitorSession } from '../fixtures/ignite-monitor-session.js';
import type { IgniteWorkspace } from '../fixtures/ignite-workspace.js';

describe('ignite queue monitor', () => {
  let ws: IgniteWorkspace;
  let runners: FakeIgniteRunners;
  const { open, start, task, close } = igniteMonitorSession();

  beforeEach(async () => {
    ({ ws, runners } = await open());
  });
  afterEach(close);

  it('converts legacy YAML and renames non-canonical names before delivery (69, 70)', async () => {
    await start();
    await writeFile(
      join(ws.root('leader'), 'user_goal_1795975394355402.yaml'),
      'type: user_goal\nfrom: user\nto: leader\npriority: high\npayload:\n  goal: "x"\n',
    );
    await writeFile(
      join(ws.root('strategist'), 'odd.mime'),
      'From: leader\nTo: strategist\nDate: Mon, 30 Nov 2026 03:15:31 +0900\nX-IGNITE-Type: strategy_request\n\nbody',
    );
    await waitFor(() => runners.turns.length === 2, 3000, 'both delivered');
    const files = runners.turns.map((t) => t.file.slice(t.file.lastIndexOf('/') + 1)).sort();
    expect(files).toEqual(['strategy_request_1795976131000000.mime', 'user_goal_1795975394355402.mime']);
  });

  it('never reads processed/ files to find timeouts (71)', async () => {
    const processed = ws.processed('ignitian_3');
    await mkdir(processed, { recursive: true });
    const old = new Date('2001-01-01T00:00:00Z');
    for (let i = 0; i < 1000; i++) {
      const file = join(processed, `task_${String(1795975394355402 + i)}.mime`);
      await writeFile(file, 'X-IGNITE-Status: delivered\n\nx');
    }
    await start({ env: { QUEUE_POLL_INTERVAL: '0.2' } });
    // Reconciliation reads each file once at start; from here on nothing may touch them.
    const atime = new Date('2000-01-01T00:00:00Z');
    for (const n of await readdir(processed)) await utimes(join(processed, n), atime, old);
    for (let i = 0; i < 3; i++) {
      await task('ignitian_3', `b${i}`);
      await waitFor(() => runners.turns.length === i + 1, 2000, 'barrier');
    }
    const touched = (
      await Promise.all((await readdir(processed)).map(async (n) => (await stat(join(processed, n))).atimeMs))
    ).filter((t) => t !== atime.getTime());
    expect(touched).toEqual([]);
  });

  it('renders progress_update lines with rate limits and rewrites progress_update_latest.txt (72, 73, 75)', async () => {
    const m = await start();
    const long = 'x'.repeat(500);
    await ws.send({
      from: 'coordinator',
      to: 'leader',
      type: 'progress_update',
      body: `stage: build\npercent: 50\nmessage: "${long}"\nsummary: "s"\n`,
    });
    await waitFor(() => m.progress.length === 1, 2000, 'first line');
    expect(m.progress[0]?.line).toBe(`stage=build percent=50 message=${long}`.slice(0, 397) + '...');
    for (let i = 0; i < 10; i++)
      await ws.send({
        from: 'coordinator',
        to: 'leader',
        type: 'progress_update',
        body: `stage: s${i}\nsummary: "line ${i}"\n`,
      });
    await ws.send({
      from: 'coordinator',
      to: 'leader',
      type: 'progress_update',
      body: 'stage: done\npercent: 100\nfinal: true\nsummary: "all\\u0007 done"\ncompleted: 3\ntotal_tasks: 3\n',
    });
    await waitFor(() => runners.turnsOf('leader').length === 12, 4000, 'all delivered');
    expect(m.progress.map((p) => p.line)).toEqual([
      expect.stringMatching(/^stage=build/),
      'stage=done percent=100 message=all done',
    ]);
    const latest = await readFile(join(ws.rt, 'state', 'progress_update_latest.txt'), 'utf8');
    expect(latest).toMatch(
      /^Progress Update\n- Repository: N\/A\n- Issue: \?\n- Tasks: 3\/3\n- Summary: all done\n- Time: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+\n$/,
    );
  });
});
