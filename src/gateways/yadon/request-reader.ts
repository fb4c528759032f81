import type { Socket } from 'node:net';
import type { Clock, Timer } from '../../core/clock.js';

/** How one request read ended. */
export type RequestRead =
  | { readonly kind: 'body'; readonly bytes: Buffer }
  | { readonly kind: 'too-large' }
  | { readonly kind: 'timed-out' }
  | { readonly kind: 'closed' };

/** Limits of {@link readRequest}. */
export interface ReadRequestOptions {
  readonly maxBytes: number;
  /** The read fails with `timed-out` when no byte arrives for this long. */
  readonly inactivityMs: number;
  readonly clock: Clock;
}

/**
 * Reads a request up to the client's half-close (end of stream). Resolves `too-large` as soon as more
 * than `maxBytes` arrived, `timed-out` after `inactivityMs` without a byte, `closed` when the connection
 * broke first. After a `too-large` the socket keeps flowing and further bytes are discarded, so the
 * caller can still write its reply before closing (closing with unread bytes would reset the client).
 * The listeners it adds are removed when the socket closes.
 */
export function readRequest(socket: Socket, options: ReadRequestOptions): Promise<RequestRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let isSettled = false;
    let timer: Timer | undefined;
    const settle = (read: RequestRead): void => {
      if (isSettled) return;
      isSettled = true;
      timer?.cancel();
      chunks.length = 0;
      resolve(read);
    };
    const arm = (): void => {
      timer?.cancel();
      timer = options.clock.setTimer(() => settle({ kind: 'timed-out' }), options.inactivityMs);
    };
    const onData = (chunk: Buffer): void => {
      if (isSettled) return;
      size += chunk.length;
      if (size > options.maxBytes) {
        settle({ kind: 'too-large' });
        return;
      }
      chunks.push(chunk);
      arm();
    };
    const onEnd = (): void => settle({ kind: 'body', bytes: Buffer.concat(chunks, size) });
    const onClose = (): void => {
      settle({ kind: 'closed' });
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onClose);
    };
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('close', onClose);
    arm();
  });
}
