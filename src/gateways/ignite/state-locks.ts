import { createHash, randomBytes } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { open, readFile, unlink } from 'node:fs/promises';
import { createConnection, createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
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

const LOCK_ID = /^[0-9a-f]{32}$/;

/**
 * The random id of a runtime dir's monitor lock, kept in `idFile` (created 0600, exclusively, by the
 * first monitor). Abstract socket names have no permissions, so the name must be one another local
 * user cannot work out: with a name derived from the runtime dir alone, anyone could bind it first and
 * keep every monitor from starting.
 */
async function lockId(idFile: string): Promise<string> {
  for (let tries = 0; ; tries++) {
    try {
      const handle = await open(idFile, 'wx', 0o600);
      const id = randomBytes(16).toString('hex');
      await handle.writeFile(id);
      await handle.close();
      return id;
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST') throw err;
    }
    const text = (await readFile(idFile, 'utf8').catch(() => '')).trim();
    if (LOCK_ID.test(text)) return text;
    // Being written by another monitor this instant; or left empty by one that died doing so.
    if (tries >= 50) await unlink(idFile).catch(() => undefined);
    await sleep(10);
  }
}

/**
 * Takes the queue monitor's singleton lock for a runtime dir (spec/ignite.md 4.8). The lock is a listening
 * Unix socket — in Linux's abstract namespace (named from a random id kept in `<state>/.monitor_lock_id`),
 * elsewhere `<state>/queue_monitor.sock` — so the kernel releases it when the process dies, even by
 * SIGKILL (what flock gives the original). The pid is also written to `lockFile` for humans and
 * `ignite stop`. Resolves null when another monitor holds it.
 */
export async function acquireMonitorLock(
  runtimeDir: string,
  lockFile: string,
  socketFile: string,
): Promise<MonitorLock | null> {
  const server = createServer((socket) => socket.destroy());
  const path =
    process.platform === 'linux'
      ? `\0musubi-ignite-${createHash('sha256')
          .update(`${runtimeDir}\0${await lockId(join(dirname(socketFile), '.monitor_lock_id'))}`)
          .digest('hex')
          .slice(0, 40)}`
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
