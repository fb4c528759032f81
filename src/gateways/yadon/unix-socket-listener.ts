import { randomBytes } from 'node:crypto';
import { link, lstat, unlink } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { MusubiError } from '../../core/errors.js';
import { errnoCode } from './os-error-text.js';
import { MAX_SOCKET_PATH_BYTES } from './yadon-paths.js';

/** How long the liveness probe of an existing socket may take before it counts as "in use". */
const PROBE_TIMEOUT_MS = 2_000;
/** Socket files are created owner-only: 0600 is 0777 minus this mask. */
const SOCKET_UMASK = 0o177;

/** A server bound to a Unix socket path by {@link listenUnixSocket}. */
export interface UnixSocketListener {
  readonly path: string;
  /**
   * Stops accepting and unlinks the path if it still is the socket this listener created (same device
   * and inode); resolves when the server has closed (open connections are the caller's to end).
   * Idempotent.
   */
  close(): Promise<void>;
}

function inUse(path: string, why: string, cause?: unknown): MusubiError {
  return new MusubiError('GATEWAY_ADDRESS_IN_USE', `socket already in use (${why}): ${path}`, {
    details: { path, reason: why },
    ...(cause !== undefined && { cause }),
  });
}

function unavailable(path: string, why: string, cause?: unknown): MusubiError {
  return new MusubiError('GATEWAY_UNAVAILABLE', `cannot listen on ${path}: ${why}`, {
    details: { path },
    ...(cause !== undefined && { cause }),
  });
}

/** Connects to an existing socket: 'live' when something accepts, 'stale' on ECONNREFUSED. */
function probe(path: string): Promise<'live' | 'stale' | 'gone' | 'unknown'> {
  return new Promise((resolve) => {
    const socket = connect(path);
    const timer = setTimeout(() => finish('unknown'), PROBE_TIMEOUT_MS);
    timer.unref();
    const finish = (outcome: 'live' | 'stale' | 'gone' | 'unknown'): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    socket.once('connect', () => finish('live'));
    socket.once('error', (err) => {
      const code = errnoCode(err);
      finish(code === 'ECONNREFUSED' ? 'stale' : code === 'ENOENT' ? 'gone' : 'unknown');
    });
  });
}

/** Clears the path for binding as spec yadon.md 2.2 says, or throws GATEWAY_ADDRESS_IN_USE. */
async function clearPath(path: string): Promise<void> {
  const info = await lstat(path).catch((err: unknown) => {
    if (errnoCode(err) === 'ENOENT') return null;
    throw unavailable(path, errnoCode(err) ?? String(err), err);
  });
  if (info === null) return;
  if (info.isDirectory()) throw inUse(path, 'a directory is in the way');
  if (info.isSocket()) {
    const state = await probe(path);
    if (state === 'live') throw inUse(path, 'a server is listening');
    if (state === 'unknown') throw inUse(path, 'the existing socket did not answer the probe');
    if (state === 'gone') return;
  }
  // A stale socket, a regular file, a symlink or a FIFO is replaced, as yadon-agents did.
  await unlink(path).catch((err: unknown) => {
    if (errnoCode(err) !== 'ENOENT') throw inUse(path, `cannot remove it: ${errnoCode(err) ?? ''}`, err);
  });
}

function bindWithUmask(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    // bind(2) happens synchronously inside listen(), so the restrictive umask covers exactly it and the
    // socket is never accessible to others, not even briefly (no chmod afterwards).
    const previous = process.umask(SOCKET_UMASK);
    try {
      server.listen(path);
    } finally {
      process.umask(previous);
    }
  });
}

/**
 * Binds `server` to the Unix socket `path` with mode 0600 without ever taking over a live socket:
 * a directory refuses; a stale socket (ECONNREFUSED), a file, a symlink or a FIFO is replaced; a socket
 * that answers (or cannot be probed) refuses. The server is bound on a private temporary name and
 * hard-linked into place, which fails instead of replacing anything that appeared meanwhile — and keeps
 * libuv, which unlinks a server's bind path on close unconditionally, away from `path`.
 *
 * Throws GATEWAY_ADDRESS_IN_USE (refused) or GATEWAY_UNAVAILABLE (path too long, folder missing, other
 * bind errors); both name the path.
 */
export async function listenUnixSocket(server: Server, path: string): Promise<UnixSocketListener> {
  const bytes = Buffer.byteLength(path);
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    throw unavailable(path, `socket path is ${bytes} bytes, longer than ${MAX_SOCKET_PATH_BYTES}`);
  }
  await clearPath(path);
  const temp = join(dirname(path), `.${basename(path).slice(0, 8)}-${randomBytes(4).toString('hex')}`);
  try {
    await bindWithUmask(server, temp);
  } catch (err) {
    throw unavailable(path, errnoCode(err) ?? String(err), err);
  }
  let identity: { dev: number; ino: number } | undefined;
  try {
    await link(temp, path).catch((err: unknown) => {
      if (errnoCode(err) === 'EEXIST') throw inUse(path, 'another server bound it first', err);
      throw unavailable(path, errnoCode(err) ?? String(err), err);
    });
    const info = await lstat(path);
    identity = { dev: info.dev, ino: info.ino };
    if ((info.mode & 0o777) !== 0o600) throw unavailable(path, 'socket was not created with mode 0600');
  } catch (err) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (identity !== undefined) await unlink(path).catch(() => undefined); // ours: created just above
    throw err;
  } finally {
    await unlink(temp).catch(() => undefined); // already gone when the server closed
  }
  const ownIdentity = identity;
  let closing: Promise<void> | undefined;
  return {
    path,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        const info = await lstat(path).catch(() => null);
        if (info !== null && info.dev === ownIdentity.dev && info.ino === ownIdentity.ino) {
          await unlink(path).catch(() => undefined); // gone meanwhile: nothing to remove
        }
        await closed;
      })();
      return closing;
    },
  };
}

/**
 * The one Unix socket server of the yadon gateway (agent and pet sockets): binds with
 * {@link listenUnixSocket}, hands every connection to `serve` (half-open allowed, socket errors of a
 * vanished client ignored), refuses connections once closing, and on `close()` stops accepting,
 * unlinks the path if still its own, lets open connections finish for `graceMs` and ends the rest.
 */
export class UnixSocketServer {
  readonly #path: string;
  readonly #graceMs: number;
  readonly #server: Server;
  readonly #connections = new Set<Socket>();
  #listener: UnixSocketListener | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: {
    readonly path: string;
    readonly serve: (socket: Socket) => void;
    /** How long close() lets connections finish before destroying them; default 0. */
    readonly graceMs?: number;
  }) {
    this.#path = options.path;
    this.#graceMs = options.graceMs ?? 0;
    this.#server = createServer({ allowHalfOpen: true }, (socket) => {
      if (this.#closing !== undefined) {
        socket.destroy();
        return;
      }
      this.#connections.add(socket);
      socket.once('close', () => this.#connections.delete(socket));
      // A client that went away (EPIPE, ECONNRESET) is of no concern to the server.
      socket.on('error', () => undefined);
      options.serve(socket);
    });
  }

  /** Binds the socket; rejects with GATEWAY_ADDRESS_IN_USE or GATEWAY_UNAVAILABLE. */
  async start(): Promise<void> {
    this.#listener = await listenUnixSocket(this.#server, this.#path);
  }

  /** Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const closed = this.#listener?.close();
      // Wall time on purpose: a shutdown grace must pass even under a test's fake clock.
      const deadline = Date.now() + this.#graceMs;
      while (this.#connections.size > 0 && Date.now() < deadline) {
        await new Promise<void>((resolve) => setTimeout(resolve, 20).unref());
      }
      for (const socket of this.#connections) socket.destroy();
      await closed;
    })();
    return this.#closing;
  }
}
