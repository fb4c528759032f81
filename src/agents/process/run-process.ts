import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { MusubiError } from '../../core/errors.js';
import type { ChildReaper } from './child-reaper.js';
import { DEFAULT_OUTPUT_CAP_BYTES, OutputCapture } from './output-capture.js';
import { DEFAULT_GRACE_MS, stopProcessGroup } from './stop-ladder.js';

/** Options of {@link runProcess}. */
export interface RunProcessOptions {
  /** Absolute path of the executable (resolved beforehand, see resolveExecutable). */
  readonly file: string;
  /** Name used in error messages (`claude`). */
  readonly displayName: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** The complete environment of the child (built with buildChildEnv). */
  readonly env: Readonly<Record<string, string>>;
  /** Written to stdin, which is then closed. Without it stdin is closed at once (the CLI sees EOF). */
  readonly stdin?: string;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Bytes kept per stream (default 8 MiB); the rest is counted and dropped. */
  readonly outputCapBytes?: number;
  /** SIGTERM → SIGKILL grace period (default 5 s). */
  readonly graceMs?: number;
  readonly reaper: ChildReaper;
  /** Run the child as this user (a root daemon dropping privileges for its agents); needs root. */
  readonly runAs?: { readonly uid: number; readonly gid: number };
  readonly onSpawn?: (pid: number) => void;
  readonly onLine?: (stream: 'stdout' | 'stderr', line: string) => void;
}

/** One process run, whatever its outcome. */
export interface ProcessResult {
  readonly pid: number;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly canceled: boolean;
  readonly durationMs: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly stderrTail: string;
  readonly isOutputTruncated: boolean;
}

type StopReason = 'timeout' | 'cancel' | 'exited';

async function assertDirectory(cwd: string, name: string): Promise<void> {
  const info = await stat(cwd).catch(() => null);
  if (info?.isDirectory() !== true) {
    throw new MusubiError(
      'AGENT_FAILED',
      `cannot start agent CLI '${name}': working directory ${cwd} does not exist`,
    );
  }
}

function spawnError(err: unknown, name: string): MusubiError {
  const code = err instanceof Error && 'code' in err ? String(err.code) : '';
  if (code === 'ENOENT') {
    return new MusubiError('AGENT_NOT_FOUND', `agent CLI '${name}' not found on PATH`, { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new MusubiError('AGENT_FAILED', `cannot start agent CLI '${name}': ${message}`, { cause: err });
}

/**
 * Runs one agent process: argv only (never a shell), its own process group, an explicit environment,
 * capped output streamed line by line. A timeout or an abort walks the stop ladder (close stdin,
 * SIGTERM to the group, grace, SIGKILL); after a normal exit, leftover members of the group
 * (background grandchildren) are stopped the same way, so nothing outlives the run.
 *
 * Resolves once the process exited and its output streams closed. Rejects only when the process could
 * not start: AGENT_NOT_FOUND (ENOENT) or AGENT_FAILED (missing cwd, EACCES, …). An already aborted
 * signal resolves a canceled result without spawning.
 */
export async function runProcess(options: RunProcessOptions): Promise<ProcessResult> {
  const startedAt = performance.now();
  if (options.signal?.aborted === true) {
    return emptyResult({ canceled: true, durationMs: 0 });
  }
  await assertDirectory(options.cwd, options.displayName);
  const capBytes = options.outputCapBytes ?? DEFAULT_OUTPUT_CAP_BYTES;
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  const onLine = options.onLine;
  const stdout = new OutputCapture({
    capBytes,
    ...(onLine && { onLine: (l: string) => onLine('stdout', l) }),
  });
  const stderr = new OutputCapture({
    capBytes,
    ...(onLine && { onLine: (l: string) => onLine('stderr', l) }),
  });

  const child = spawn(options.file, [...options.args], {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
    windowsHide: true,
    ...(options.runAs !== undefined && { uid: options.runAs.uid, gid: options.runAs.gid }),
  });
  const exited = new Promise<[number | null, string | null]>((resolve) => {
    child.once('exit', (code, sig) => resolve([code, sig]));
  });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (err) => reject(spawnError(err, options.displayName)));
  });
  // Errors after a successful spawn (a failed stdio write) surface through the exit code and streams.
  child.on('error', () => undefined);
  const pid = child.pid ?? -1;
  const untrack = options.reaper.track(pid);
  options.onSpawn?.(pid);

  let stopReason: StopReason | undefined;
  let stopping: Promise<unknown> | undefined;
  const stop = (reason: StopReason): void => {
    if (stopping !== undefined) return;
    stopReason = reason;
    stopping = stopProcessGroup(pid, { graceMs, stdin: child.stdin });
  };

  // EPIPE when the CLI exits without reading its prompt is expected; the exit code tells the story.
  child.stdin.on('error', () => undefined);
  child.stdin.end(options.stdin ?? '');
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));

  const timer = setTimeout(() => stop('timeout'), Math.max(0, options.timeoutMs));
  const onAbort = (): void => stop('cancel');
  options.signal?.addEventListener('abort', onAbort, { once: true });

  try {
    const [exitCode, signal] = await exited;
    // The leader is gone; any member left (a grandchild in the background) is stopped too.
    stop('exited');
    await stopping;
    await waitForClose(child, closed, graceMs);
    stdout.end();
    stderr.end();
    return {
      pid,
      exitCode,
      signal,
      timedOut: stopReason === 'timeout',
      canceled: stopReason === 'cancel',
      durationMs: performance.now() - startedAt,
      stdout: stdout.text(),
      stderr: stderr.text(),
      stderrTail: stderr.tail(),
      isOutputTruncated: stdout.isTruncated || stderr.isTruncated,
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    untrack();
  }
}

/**
 * Waits for the child's stdio to close. A process that left the group (setsid) could hold the pipes
 * open forever, so after `graceMs` the streams are destroyed instead.
 */
async function waitForClose(
  child: ReturnType<typeof spawn>,
  closed: Promise<void>,
  graceMs: number,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve();
    }, graceMs);
  });
  await Promise.race([closed, gaveUp]);
  clearTimeout(timer);
}

function emptyResult(fields: { canceled: boolean; durationMs: number }): ProcessResult {
  return {
    pid: -1,
    exitCode: null,
    signal: null,
    timedOut: false,
    canceled: fields.canceled,
    durationMs: fields.durationMs,
    stdout: '',
    stderr: '',
    stderrTail: '',
    isOutputTruncated: false,
  };
}
