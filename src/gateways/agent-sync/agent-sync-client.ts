import { connect, type Socket } from 'node:net';

/** Largest reply line a client accepts (16 MiB). */
export const MAX_CLIENT_REPLY_BYTES = 16 * 1024 * 1024;

/** Outcome of {@link connectAgentSync}: a socket, or the OS error text. */
export type ConnectResult =
  { readonly ok: true; readonly socket: Socket } | { readonly ok: false; readonly message: string };

/** Outcome of {@link exchangeLine}: the reply line (without `\n`), or why there is none. */
export type ExchangeResult =
  | { readonly ok: true; readonly line: string }
  | {
      readonly ok: false;
      readonly reason: 'closed' | 'timeout' | 'too-long' | 'error';
      readonly message: string;
    };

/** Opens one TCP connection; `timeoutMs` bounds the connect. Never rejects. */
export function connectAgentSync(options: {
  readonly host: string;
  readonly port: number;
  readonly timeoutMs?: number;
}): Promise<ConnectResult> {
  return new Promise((resolve) => {
    const socket = connect({ host: options.host, port: options.port });
    let timer: NodeJS.Timeout | undefined;
    const done = (result: ConnectResult): void => {
      clearTimeout(timer);
      socket.off('connect', onConnect);
      socket.off('error', onError);
      if (!result.ok) socket.destroy();
      resolve(result);
    };
    const onConnect = (): void => done({ ok: true, socket });
    const onError = (err: Error): void => done({ ok: false, message: err.message });
    socket.once('connect', onConnect);
    socket.once('error', onError);
    if (options.timeoutMs !== undefined) {
      timer = setTimeout(() => done({ ok: false, message: 'timed out' }), options.timeoutMs);
    }
  });
}

/**
 * Writes one request line and reads one reply line (up to 16 MiB), then closes the socket.
 * `timeoutMs` bounds the wait for the reply (none by default). Never rejects.
 */
export function exchangeLine(
  socket: Socket,
  line: string,
  options: { readonly timeoutMs?: number } = {},
): Promise<ExchangeResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let timer: NodeJS.Timeout | undefined;
    const finish = (result: ExchangeResult): void => {
      clearTimeout(timer);
      socket.removeAllListeners('data').removeAllListeners('end').removeAllListeners('error');
      socket.on('error', () => undefined); // late errors after we are done are irrelevant
      socket.destroy();
      resolve(result);
    };
    socket.on('data', (chunk: Buffer) => {
      const nl = chunk.indexOf(0x0a);
      const part = nl < 0 ? chunk : chunk.subarray(0, nl);
      chunks.push(part);
      size += part.length;
      if (size > MAX_CLIENT_REPLY_BYTES) finish({ ok: false, reason: 'too-long', message: 'reply too long' });
      else if (nl >= 0) finish({ ok: true, line: Buffer.concat(chunks).toString('utf8') });
    });
    socket.on('end', () => finish({ ok: false, reason: 'closed', message: 'connection closed' }));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A reset before the reply is the server going away, like an end of stream.
      const isReset = err.code === 'ECONNRESET' || err.code === 'EPIPE';
      finish({ ok: false, reason: isReset ? 'closed' : 'error', message: err.message });
    });
    if (options.timeoutMs !== undefined) {
      timer = setTimeout(
        () => finish({ ok: false, reason: 'timeout', message: 'timed out waiting for reply' }),
        options.timeoutMs,
      );
    }
    socket.write(`${line}\n`);
  });
}

/** Connect, one request, one reply, close: what hooks and the monitor do. Never rejects. */
export async function requestLine(options: {
  readonly host: string;
  readonly port: number;
  readonly line: string;
  readonly timeoutMs?: number;
}): Promise<ExchangeResult> {
  const started = Date.now();
  const connected = await connectAgentSync(options);
  if (!connected.ok) return { ok: false, reason: 'error', message: connected.message };
  const left =
    options.timeoutMs === undefined ? undefined : Math.max(1, options.timeoutMs - (Date.now() - started));
  return exchangeLine(connected.socket, options.line, left === undefined ? {} : { timeoutMs: left });
}
