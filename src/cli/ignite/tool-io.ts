/**
 * What the IGNITE command-line tools (mime, send) need from their process, injected so they run the same
 * from the lean entries, from `musubi ignite`, and in tests.
 */
export interface ToolIo {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly pid: number;
  /** The width of the terminal on stdout, when stdout is one (argparse wraps its usage lines to it). */
  readonly terminalColumns?: number;
  /** Milliseconds since the epoch with a sub-millisecond fraction. */
  now(): number;
  readStdin(): Promise<Uint8Array>;
  stdout(text: string): void;
  stderr(text: string): void;
}

/** The {@link ToolIo} of the running process. */
export function processToolIo(argv: readonly string[]): ToolIo {
  return {
    argv,
    env: process.env,
    cwd: process.cwd(),
    pid: process.pid,
    ...(process.stdout.isTTY && { terminalColumns: process.stdout.columns }),
    now: () => performance.timeOrigin + performance.now(),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin)
        chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
      return Buffer.concat(chunks);
    },
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
  };
}

/**
 * A Python-style one-line description of a failed file operation, e.g.
 * `FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent'`.
 */
export function describeFileError(err: unknown, path: string): string {
  const code = err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : '';
  const known: Record<string, readonly [string, number, string]> = {
    ENOENT: ['FileNotFoundError', 2, 'No such file or directory'],
    EACCES: ['PermissionError', 13, 'Permission denied'],
    EPERM: ['PermissionError', 1, 'Operation not permitted'],
    EISDIR: ['IsADirectoryError', 21, 'Is a directory'],
    ENOTDIR: ['NotADirectoryError', 20, 'Not a directory'],
    ENOSPC: ['OSError', 28, 'No space left on device'],
    EROFS: ['OSError', 30, 'Read-only file system'],
  };
  const entry = known[code];
  const quoted = `'${path.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
  if (entry !== undefined) return `${entry[0]}: [Errno ${entry[1]}] ${entry[2]}: ${quoted}`;
  if (err instanceof Error && 'code' in err && err.code === 'GATEWAY_FRAME_INVALID') {
    return `UnicodeDecodeError: ${err.message}`;
  }
  return `OSError: ${err instanceof Error ? err.message : String(err)}: ${quoted}`;
}
