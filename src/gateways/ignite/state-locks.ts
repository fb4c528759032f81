import { createHash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { open, readFile, unlink } from 'node:fs/promises';
import { createConnection, createServer, type Server } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { isProcessAlive } from '../../agents/process/process-group.js';
import { errnoCode } from './queue-file-io.js';

/**
 * Takes the per-agent delivery lock `<rt>/state/.send_lock_<idx>` (spec/ignite.md 4.4): a file created
 * exclusively with our pid; one left by a dead process is taken over. Resolves the release function, or
 * null when the lock stayed held for `timeoutMs`.
 */
export async function acquireSendLock(
  path: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<(() => Promise<void>) | null> {
  const deadline = Date.now() + timeoutMs;
  for (let waitMs = 5; ; waitMs = Math.min(waitMs * 2, 100)) {
    try {
      // Synchronous: taken once per turn on the hot path (see queue-file-io.ts).
      const fd = openSync(path, 'wx', 0o600);
      try {
        writeSync(fd, `${process.pid}\n`);
      } finally {
        closeSync(fd);
      }
      return () => unlink(path).catch(() => undefined);
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
    }
    const holder = Number((await readFile(path, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(holder) && holder > 0 && !isProcessAlive(holder)) {
      await unlink(path).catch(() => undefined);
      continue;
    }
    if (Date.now() >= deadline || signal?.aborted === true) return null;
    await sleep(Math.min(waitMs, Math.max(1, deadline - Date.now())), undefined, { ref: false });
  }
}

/** A held singleton lock of one runtime dir; `release` is idempotent. */
export interface MonitorLock {
  release(): Promise<void>;
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function isListening(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Takes the queue monitor's singleton lock for a runtime dir (spec/ignite.md 4.8). The lock is a listening
 * Unix socket — in Linux's abstract namespace, elsewhere `<state>/queue_monitor.sock` — so the kernel
 * releases it when the process dies, even by SIGKILL (what flock gives the original). The pid is also
 * written to `lockFile` for humans and `ignite stop`. Resolves null when another monitor holds it.
 */
export async function acquireMonitorLock(
  runtimeDir: string,
  lockFile: string,
  socketFile: string,
): Promise<MonitorLock | null> {
  const server = createServer((socket) => socket.destroy());
  const path =
    process.platform === 'linux'
      ? `\0musubi-ignite-${createHash('sha256').update(runtimeDir).digest('hex').slice(0, 40)}`
      : socketFile;
  try {
    await listen(server, path);
  } catch (err) {
    if (errnoCode(err) !== 'EADDRINUSE') throw err;
    if (path !== socketFile || (await isListening(path))) return null;
    await unlink(path).catch(() => undefined);
    await listen(server, path);
  }
  server.unref();
  const handle = await open(lockFile, 'w', 0o600);
  await handle.writeFile(`${process.pid}\n`);
  await handle.close();
  let releasing: Promise<void> | undefined;
  return {
    release: () =>
      (releasing ??= (async () => {
        await new Promise<void>((resolve) => server.close(() => resolve()));
        const holder = (await readFile(lockFile, 'utf8').catch(() => '')).trim();
        if (holder === String(process.pid)) await unlink(lockFile).catch(() => undefined);
      })()),
  };
}
