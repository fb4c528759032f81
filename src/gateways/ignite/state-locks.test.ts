import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireMonitorLock } from './state-locks.js';

describe.runIf(process.platform === 'linux')('acquireMonitorLock (Linux abstract socket)', () => {
  let dir: string;
  const servers: Server[] = [];
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'musubi-lock-'))));
  afterEach(async () => {
    for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });
  const acquire = () =>
    acquireMonitorLock(dir, join(dir, 'queue_monitor.lock'), join(dir, 'queue_monitor.sock'));

  it('holds one monitor per runtime dir, and frees the lock on release', async () => {
    const first = await acquire();
    expect(first).not.toBeNull();
    expect(await acquire()).toBeNull();
    await first?.release();
    const again = await acquire();
    expect(again).not.toBeNull();
    await again?.release();
  });

  it('cannot be taken first by someone who knows only the runtime dir', async () => {
    // The name another local user could compute: the runtime dir's hash alone (the previous scheme).
    const guessable = `\0musubi-ignite-${createHash('sha256').update(dir).digest('hex').slice(0, 40)}`;
    const squatter = createServer();
    servers.push(squatter);
    await new Promise<void>((resolve) => squatter.listen(guessable, resolve));
    const lock = await acquire();
    expect(lock).not.toBeNull();
    const idFile = join(dir, '.monitor_lock_id');
    expect(await readFile(idFile, 'utf8')).toMatch(/^[0-9a-f]{32}$/);
    expect((await stat(idFile)).mode & 0o777).toBe(0o600);
    await lock?.release();
  });
});
