/** The socket-timeout text Python prints (`socket.timeout: timed out`). */
export const TIMED_OUT_TEXT = 'timed out';

const PY_ERRNO_TEXTS: Readonly<Record<string, string>> = {
  ENOENT: '[Errno 2] No such file or directory',
  ECONNREFUSED: '[Errno 111] Connection refused',
  EACCES: '[Errno 13] Permission denied',
  EPIPE: '[Errno 32] Broken pipe',
  ECONNRESET: '[Errno 104] Connection reset by peer',
};

/** The `code` of a Node system error (`ENOENT`), if it has one. */
export function errnoCode(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

/**
 * Renders an OS error the way yadon-agents (Python) did (spec yadon.md 2.6): `[Errno 2] No such file or
 * directory` and friends, `timed out` for timeouts, else the first line of the message.
 */
export function pyErrorText(err: unknown): string {
  const code = errnoCode(err);
  if (code === 'ETIMEDOUT') return TIMED_OUT_TEXT;
  const known = code === undefined ? undefined : PY_ERRNO_TEXTS[code];
  if (known !== undefined) return known;
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0] ?? '';
}
