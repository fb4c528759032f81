// IGNITE queue monitor and hostile queue file names: too long to normalise, dates outside 16 digits,
// control characters, names that are not UTF-8. Each is delivered once or logged once and left alone; none
// may crash the monitor (an unhandled rejection fails this file's run).
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FakeIgniteRunners } from '../fakes/fake-ignite-runner.js';
import { waitFor } from '../fakes/fake-cli-harness.js';
import { captureLogger, type LogEntry } from '../fixtures/ignite-monitor.js';
import { igniteMonitorSession } from '../fixtures/ignite-monitor-session.js';
import type { IgniteWorkspace } from '../fixtures/ignite-workspace.js';

const base = (path: string): string => path.slice(path.lastIndexOf('/') + 1);
const bytes = (name: string): number => Buffer.byteLength(name, 'utf8');

describe('ignite queue monitor: bad queue file names', () => {
  let ws: IgniteWorkspace;
  let runners: FakeIgniteRunners;
  let logs: LogEntry[];
  const { open, start, task, close } = igniteMonitorSession();
  const logged = (text: string): LogEntry[] => logs.filter((e) => e.msg.includes(text));
  /** Queues a task for the leader and waits for its turn: proves a scan after everything written before. */
  const barrier = async (id: string): Promise<void> => {
    const name = base(await task('leader', id));
    await waitFor(() => runners.turns.some((t) => base(t.file) === name), 5000, id);
  };

  beforeEach(async () => {
    ({ ws, runners } = await open());
    logs = [];
  });
  afterEach(close);

  it('normalises names that would exceed 255 bytes to a fitting type and delivers every file once', async () => {
    await start({ logger: captureLogger(logs) });
    const leader = ws.root('leader');
    await writeFile(join(leader, `${'a'.repeat(245)}.mime`), 'From: user\nTo: leader\n\nno type');
    await writeFile(join(leader, 'odd.mime'), `From: user\nX-IGNITE-Type: ${'t'.repeat(250)}\n\nlong type`);
    await writeFile(join(leader, 'x.yaml'), `type: ${'t'.repeat(300)}\nfrom: user\nto: leader\n`);
    await writeFile(join(leader, `${'y'.repeat(245)}.yaml`), 'type: short\nfrom: user\nto: leader\n');
    await task('leader', 'plain');
    await waitFor(() => runners.turnsOf('leader').length === 5, 5000, 'all five delivered');
    const names = runners.turnsOf('leader').map((t) => base(t.file));
    expect(names.map((n) => n.replace(/_[0-9]{16}\.mime$/, '')).sort()).toEqual([
      'odd',
      'short',
      'task_assignment',
      'unknown',
      'x',
    ]);
    for (const n of names) expect(bytes(n)).toBeLessThanOrEqual(255);
    expect(await ws.list(leader)).toEqual([]);
    expect(logs.filter((e) => e.level === 'error')).toEqual([]);
  });

  it('dead-letters a 255-byte name under a cut name that fits', async () => {
    runners.behaviour = (t) => (t.agent === 'ignitian_1' ? { isFailure: true } : {});
    await start({ logger: captureLogger(logs) });
    const name = `${'t'.repeat(233)}_1796000000000000.mime`;
    expect(bytes(name)).toBe(255);
    await writeFile(join(ws.root('ignitian_1'), name), 'From: user\nX-IGNITE-Type: t\n\nhello');
    const dlq = join(ws.rt, 'queue', 'dead_letter');
    await waitFor(async () => (await ws.list(dlq)).length === 1, 8000, 'dead letter written');
    const [entry = ''] = await ws.list(dlq);
    // The base (the name minus `.mime`) is cut so the whole name is 255 bytes.
    expect(entry).toMatch(/^t{233}_1_dlq_[0-9]{10}\.mime$/);
    expect(bytes(entry)).toBe(255);
    expect(await readFile(join(dlq, entry), 'utf8')).toContain(name);
  });

  it('takes the current time for a Date before 1970 or after 2286: one canonical rename, one turn', async () => {
    await start({ logger: captureLogger(logs) });
    const leader = ws.root('leader');
    await writeFile(join(leader, 'old.mime'), 'From: user\nDate: Mon, 01 Jan 1900 00:00:00 +0000\n\nold');
    await writeFile(join(leader, 'late.mime'), 'From: user\nDate: Mon, 01 Jan 3000 00:00:00 +0000\n\nlate');
    await waitFor(() => runners.turnsOf('leader').length === 2, 5000, 'both delivered');
    await barrier('after-dates');
    const names = runners.turnsOf('leader').map((t) => base(t.file));
    expect(names).toHaveLength(3);
    const renamed = names.slice(0, 2);
    expect(renamed.map((n) => n.slice(0, n.indexOf('_'))).sort()).toEqual(['late', 'old']);
    const now = BigInt(Date.now()) * 1000n;
    for (const n of renamed) {
      expect(n).toMatch(/^(old|late)_[0-9]{16}\.mime$/);
      const stamp = BigInt(/_([0-9]{16})\.mime$/.exec(n)?.[1] ?? '0');
      expect(stamp > now - 60_000_000n && stamp < now + 1_000_000n).toBe(true);
    }
    expect(logged('ファイル名を正規化')).toHaveLength(2);
  });

  it('leaves names with control characters alone: never renamed, never delivered, logged once', async () => {
    // Rescans only, so each barrier proves one more scan saw the hostile files.
    await start({ logger: captureLogger(logs), isWatching: false });
    const leader = ws.root('leader');
    const hostile = ['a\nb.mime', 'x_0000000000000001.mime\nx_0000000000000002.mime', 'c\u0001d.mime'];
    for (const n of hostile) await writeFile(join(leader, n), 'From: user\nX-IGNITE-Type: t\n\nhello');
    await barrier('first-scan');
    await barrier('second-scan');
    expect(runners.turnsOf('leader')).toHaveLength(2);
    expect(await ws.list(leader)).toEqual([...hostile].sort());
    const warnings = logged('control characters');
    expect(warnings.map((e) => e.fields['file']).sort()).toEqual([...hostile].sort());
    expect(logged('ファイル名を正規化')).toEqual([]);
  });

  it('reports a queue file whose name is not UTF-8 once and leaves it in place', async () => {
    await start({ logger: captureLogger(logs), isWatching: false });
    const raw = Buffer.concat([
      Buffer.from(`${ws.root('leader')}/task_`),
      Buffer.from([0xff]),
      Buffer.from('_0000000000000011.mime'),
    ]);
    await writeFile(raw, 'From: user\nX-IGNITE-Type: t\n\nhello');
    await barrier('first-scan');
    await barrier('second-scan');
    expect(runners.turnsOf('leader')).toHaveLength(2);
    const warnings = logged('not valid UTF-8');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.fields['nameHex']).toBe(
      Buffer.from('task_\xff_0000000000000011.mime', 'latin1').toString('hex'),
    );
    const left = await readdir(ws.root('leader'), { encoding: 'buffer' });
    expect(left.some((b) => b.includes(0xff))).toBe(true);
  });
});
