import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { lstat, open, readFile, unlink } from 'node:fs/promises';
import { connect } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { z } from 'zod';
import { isProcessAlive } from '../../agents/process/process-group.js';
import { waitUntil } from '../../agents/process/stop-ladder.js';
import { errnoCode } from '../../gateways/yadon/os-error-text.js';
import { hostLogPath } from '../../gateways/yadon/yadon-paths.js';
import { readHostInfo, readHostPid, removeHostFiles } from './host-files.js';
import type { HostReport } from './run-host.js';
import { ensureSocketDir } from '../../gateways/yadon/socket-dir.js';

const STOP_GRACE_MS = 5_000;
const KILL_WAIT_MS = 2_000;
const REPORT_TIMEOUT_MS = 60_000;

/** True when `pid` is a live musubi yadon host (checked through /proc where there is one). */
async function isYadonHost(pid: number): Promise<boolean> {
  if (!isProcessAlive(pid)) return false;
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => null);
  if (cmdline === null) return true; // no procfs: the pid file is all we have
  const args = cmdline.split('\0');
  return args.includes('yadon') && args.includes('host');
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (err) {
    if (errnoCode(err) !== 'ESRCH') throw err; // it exited on its own meanwhile
  }
}

/** Resolves whether something accepts connections on the Unix socket `path`. */
function isSocketLive(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', (err) => resolve(errnoCode(err) !== 'ECONNREFUSED' && errnoCode(err) !== 'ENOENT'));
  });
}

/**
 * Stops the host recorded in `<dir>/yadon-host.pid` if it is alive (SIGTERM, up to 5 s, SIGKILL), then
 * removes that host's sockets that nobody serves any more and its pid and info files. Sockets of other
 * servers and other directories are never touched. Resolves whether a host was stopped.
 */
export async function stopHost(dir: string): Promise<boolean> {
  const pid = await readHostPid(dir);
  if (pid === null) return false;
  const info = await readHostInfo(dir);
  const wasRunning = await isYadonHost(pid);
  if (wasRunning) {
    signal(pid, 'SIGTERM');
    if (!(await waitUntil(() => !isProcessAlive(pid), STOP_GRACE_MS))) {
      signal(pid, 'SIGKILL');
      await waitUntil(() => !isProcessAlive(pid), KILL_WAIT_MS);
    }
  }
  for (const path of info?.pid === pid ? info.sockets : []) {
    const entry = await lstat(path).catch(() => null);
    if (entry?.isSocket() === true && !(await isSocketLive(path))) await unlink(path).catch(() => undefined);
  }
  await removeHostFiles(dir, pid);
  return wasRunning;
}

/** Waits up to `timeoutMs` (polling every 0.5 s) until every path exists; resolves whether they all do. */
export async function waitForSockets(paths: readonly string[], timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const present = await Promise.all(
      paths.map((p) =>
        lstat(p).then(
          (s) => s.isSocket(),
          () => false,
        ),
      ),
    );
    if (present.every(Boolean)) return true;
    if (Date.now() >= deadline) return false;
    await delay(Math.min(500, Math.max(1, deadline - Date.now())));
  }
}

/** How starting a daemon host went. */
export type DaemonStart = HostReport | { readonly kind: 'exited'; readonly code: number | null };

/**
 * Starts `musubi yadon host --foreground <workDir>` as a detached daemon of ours: argv (never a shell),
 * this process's Node flags and CLI entry, `env` as its environment, stdin/stdout ignored and stderr
 * appended to `<dir>/yadon-host.log` (0600). Resolves the host's first report (ready, refused, failed)
 * or its early exit; the daemon then lives on its own.
 */
export async function startHostDaemon(options: {
  readonly dir: string;
  readonly workDir: string;
  readonly env: NodeJS.ProcessEnv;
  readonly globalArgs: readonly string[];
  /** The host's working directory (config file and relative store paths); default this process's. */
  readonly cwd?: string;
}): Promise<DaemonStart> {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NOFOLLOW;
  // The log lives in the socket directory, which the host would create (0700) only once it runs.
  await ensureSocketDir(options.dir);
  const log = await open(hostLogPath(options.dir), flags, 0o600);
  try {
    const entry = process.argv[1] ?? '';
    const args = [
      ...process.execArgv,
      entry,
      ...options.globalArgs,
      'yadon',
      'host',
      '--foreground',
      options.workDir,
    ];
    const child = spawn(process.execPath, args, {
      detached: true,
      cwd: options.cwd ?? process.cwd(),
      env: options.env,
      stdio: ['ignore', 'ignore', log.fd, 'ipc'],
    });
    return await new Promise<DaemonStart>((resolve) => {
      const timer = setTimeout(
        () => finish({ kind: 'failed', message: 'the host did not report in time' }),
        REPORT_TIMEOUT_MS,
      );
      const finish = (outcome: DaemonStart): void => {
        clearTimeout(timer);
        child.removeAllListeners();
        if (child.connected) child.disconnect();
        child.unref();
        resolve(outcome);
      };
      child.on('message', (message: unknown) => {
        const report = parseReport(message);
        if (report !== undefined) finish(report);
      });
      child.once('error', (err) => finish({ kind: 'failed', message: err.message }));
      child.once('exit', (code) => finish({ kind: 'exited', code }));
    });
  } finally {
    await log.close();
  }
}

const reportSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('ready'), pid: z.number().int(), warnings: z.array(z.string()) }),
  z.object({ kind: z.literal('refused'), path: z.string() }),
  z.object({ kind: z.literal('failed'), message: z.string() }),
]);

function parseReport(message: unknown): HostReport | undefined {
  const parsed = reportSchema.safeParse(message);
  return parsed.success ? parsed.data : undefined;
}
