import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleCli, type BundledCli } from '../fixtures/bundled-cli.js';

let dir: string;
let musubi: BundledCli;
beforeAll(async () => {
  [dir, musubi] = await Promise.all([mkdtemp(join(tmpdir(), 'musubi-cli-')), bundleCli()]);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await musubi.remove();
});

const cli = (args: string[], input?: string) =>
  musubi.run(args, {
    cwd: dir,
    env: { MUSUBI_STORE: 'sqlite:bus.db' },
    ...(input === undefined ? {} : { input }),
  });

describe('cli - bus commands against a SQLite file', () => {
  it('sends, peeks, receives with a lease and acks across separate processes', async () => {
    const sent = await cli([
      'bus',
      'send',
      '--to',
      'worker-1',
      '--type',
      'task',
      '--body',
      'hello',
      '--priority',
      'high',
    ]);
    expect(sent.stderr).toBe('');
    expect(sent.code).toBe(0);
    const id = sent.stdout.trim();
    expect(id).toMatch(/^[0-9A-Z]{26}$/);

    const peek = await cli(['bus', 'peek', 'worker-1', '--json']);
    expect(JSON.parse(peek.stdout)).toMatchObject({
      counts: { ready: 1, total: 1 },
      messages: [{ envelope: { id } }],
    });

    const received = await cli(['bus', 'receive', 'worker-1', '--timeout', '1000', '--json']);
    expect(received.code).toBe(0);
    const delivery: { deliveryId: string; envelope: { id: string; body: string; attempt: number } } =
      JSON.parse(received.stdout);
    expect(delivery.envelope).toMatchObject({ id, body: 'hello', attempt: 1 });

    const acked = await cli(['bus', 'ack', delivery.deliveryId]);
    expect(acked.code).toBe(0);
    const twice = await cli(['bus', 'ack', delivery.deliveryId]);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/^musubi: NOT_FOUND: /);

    const events = await cli(['bus', 'events', '--json']);
    const types = events.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types).toEqual(['message.sent', 'message.claimed', 'message.acked']);
  });

  it('reads the body from stdin and keeps an explicit id idempotent', async () => {
    const first = await cli(
      ['bus', 'send', '--to', 'w2', '--type', 'note', '--id', 'fixed-1', '--body-file', '-'],
      'from stdin',
    );
    const second = await cli([
      'bus',
      'send',
      '--to',
      'w2',
      '--type',
      'note',
      '--id',
      'fixed-1',
      '--body',
      'other',
      '--json',
    ]);
    expect(first.stdout.trim()).toBe('fixed-1');
    expect(JSON.parse(second.stdout)).toMatchObject({ id: 'fixed-1', isDuplicate: true });
    const got = await cli(['bus', 'receive', 'w2', '--timeout', '0']);
    expect(got.stdout).toContain('from stdin');
  });

  it('says so when the store has no mailboxes, and prints [] with --json', async () => {
    const empty = { cwd: dir, env: { MUSUBI_STORE: 'memory:' } };
    const text = await musubi.run(['bus', 'mailboxes'], empty);
    expect(text).toMatchObject({ code: 0, stdout: 'no mailboxes: nothing was sent on this store yet\n' });
    const json = await musubi.run(['bus', 'mailboxes', '--json'], empty);
    expect(JSON.parse(json.stdout)).toEqual([]);
  });

  it('exits 3 when receive times out', async () => {
    const run = await cli(['bus', 'receive', 'empty', '--timeout', '50']);
    expect(run.code).toBe(3);
  });

  it('nacks into the dead letters after the last attempt and retries from there', async () => {
    await cli(['bus', 'send', '--to', 'w3', '--type', 'job', '--id', 'job-9']);
    for (let i = 0; i < 3; i++) {
      const r = await cli(['bus', 'receive', 'w3', '--timeout', '0', '--json']);
      const { deliveryId } = JSON.parse(r.stdout) as { deliveryId: string };
      const n = await cli(['bus', 'nack', deliveryId, '--delay', '0', '--reason', 'boom']);
      expect(n.code).toBe(0);
    }
    const dlq = await cli(['bus', 'dlq', 'list', 'w3', '--json']);
    expect(JSON.parse(dlq.stdout)).toMatchObject([
      { mailbox: 'w3', reason: 'boom', envelope: { id: 'job-9' } },
    ]);
    const retry = await cli(['bus', 'dlq', 'retry', 'job-9']);
    expect(retry.stdout).toContain('requeued job-9 into w3');
    const again = await cli(['bus', 'receive', 'w3', '--timeout', '0', '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ envelope: { id: 'job-9', attempt: 1 } });
  });

  it('discards a dead letter for good; the id can be sent again; a second discard is NOT_FOUND', async () => {
    for (const [box, id] of [
      ['w4', 'job-10'],
      ['w5', 'job-11'],
    ] as const) {
      await cli(['bus', 'send', '--to', box, '--type', 'job', '--id', id]);
      for (let i = 0; i < 3; i++) {
        const r = await cli(['bus', 'receive', box, '--timeout', '0', '--json']);
        const { deliveryId } = JSON.parse(r.stdout) as { deliveryId: string };
        await cli(['bus', 'nack', deliveryId, '--delay', '0', '--reason', 'boom']);
      }
    }
    const discard = await cli(['bus', 'dlq', 'discard', 'job-10']);
    expect(discard).toMatchObject({ code: 0, stderr: '', stdout: 'discarded job-10 from w4\n' });
    const json = await cli(['bus', 'dlq', 'discard', 'job-11', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject([
      { mailbox: 'w5', reason: 'boom', envelope: { id: 'job-11' } },
    ]);
    const twice = await cli(['bus', 'dlq', 'discard', 'job-10']);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toMatch(/^musubi: NOT_FOUND: /);
    expect((await cli(['bus', 'dlq', 'discard'])).code).toBe(2);
    expect((await cli(['bus', 'dlq', 'list', 'w4'])).stdout).toBe('no dead letters\n');
    const again = await cli(['bus', 'send', '--to', 'w4', '--type', 'job', '--id', 'job-10', '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ id: 'job-10', isDuplicate: false });
  });

  it('prints one error line and exits non-zero on bad input', async () => {
    const badName = await cli(['bus', 'send', '--to', '../etc', '--type', 't']);
    expect(badName.code).toBe(1);
    expect(badName.stderr).toMatch(/^musubi: MAILBOX_NAME_INVALID: /);
    const badPriority = await cli(['bus', 'send', '--to', 'w', '--type', 't', '--priority', 'urgent']);
    expect(badPriority.code).toBe(2);
    const badStore = await musubi.run(['bus', 'peek', 'w'], { cwd: dir, env: { MUSUBI_STORE: 'redis://x' } });
    expect(badStore.stderr).toMatch(/^musubi: STORE_URL_INVALID: /);
    const usage = await cli(['bus', 'receive']);
    expect(usage.code).toBe(2);
  });

  it('ends quietly with exit 0 when the reader of its output goes away (`… --watch | head`)', async () => {
    const child = spawn(process.execPath, [musubi.entry, 'ignite', 'status', '--watch', '0.1'], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    await new Promise((resolve) => child.stdout.once('data', resolve));
    child.stdout.destroy(); // what `head` does once it has its lines
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect([code, stderr]).toEqual([0, '']);
  });
});
