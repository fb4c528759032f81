import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import type { ChildReaper } from '../../../agents/process/child-reaper.js';
import { buildChildEnv } from '../../../agents/process/child-env.js';
import { resolveExecutable } from '../../../agents/process/resolve-executable.js';
import { runProcess } from '../../../agents/process/run-process.js';
import type { Channel, ChannelAvailability, ChannelGroup, ChannelRunResult } from '../channel.js';

/** Default limit of one shell task. */
export const DEFAULT_SHELL_TIMEOUT_MS = 600_000;
const SUMMARY_CHARS = 500;

/** Settings of {@link createShellChannel}. */
export interface ShellChannelOptions {
  readonly id: string;
  readonly description: string;
  /** The command, argv style (never a shell); the instruction arrives on stdin. */
  readonly argv: readonly string[];
  /** Absolute working directory; must stay inside `root`. */
  readonly cwd: string;
  /** The folder every task is confined to (the agent server's work directory). */
  readonly root: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly reaper: ChildReaper;
  readonly group?: ChannelGroup;
  readonly timeoutMs?: number;
  /** SIGTERM → SIGKILL grace of the stop ladder. */
  readonly graceMs?: number;
}

async function confinedCwd(cwd: string, root: string): Promise<string | undefined> {
  const [real, realRoot] = await Promise.all([
    realpath(cwd).catch(() => undefined),
    realpath(root).catch(() => undefined),
  ]);
  if (real === undefined || realRoot === undefined) return undefined;
  const inside = relative(realRoot, real);
  if (inside.startsWith('..') || isAbsolute(inside)) return undefined;
  return (await stat(real)).isDirectory() ? real : undefined;
}

function tail(text: string): string {
  return text.trimEnd().slice(-SUMMARY_CHARS);
}

/**
 * The shell command runner (group `computer_use`, exclusive FIFO): runs the configured argv (no shell)
 * in the configured cwd — which must resolve, symlinks included, inside `root` — with the instruction
 * on stdin and `MUSUBI_TASK_ID` / `MUSUBI_TASK_INSTRUCTION` in an allowlisted environment. Success iff
 * exit code 0; summary = the last 500 characters of stdout; a timeout stops the process tree (`Timed
 * out`). Ready iff the executable and the cwd exist.
 */
export function createShellChannel(options: ShellChannelOptions): Channel {
  const [command = '', ...args] = options.argv;

  const locate = async (): Promise<{ file: string | null; cwd: string | undefined }> => {
    const cwd = await confinedCwd(options.cwd, options.root);
    const file = cwd === undefined ? null : await resolveExecutable(command, options.env['PATH'], cwd);
    return { file, cwd };
  };

  return {
    id: options.id,
    kind: 'shell',
    group: options.group ?? 'computer_use',
    concurrency: 'exclusive',
    description: options.description,
    async isAvailable(): Promise<ChannelAvailability> {
      const { file, cwd } = await locate();
      if (cwd === undefined)
        return {
          ready: false,
          reasons: [`working directory ${options.cwd} missing or outside the work directory`],
        };
      return file === null
        ? { ready: false, reasons: [`command '${command}' not found`] }
        : { ready: true, reasons: [] };
    },
    async run(task, run): Promise<ChannelRunResult> {
      const { file, cwd } = await locate();
      if (cwd === undefined || file === null) {
        const error =
          cwd === undefined
            ? `working directory ${options.cwd} is not usable`
            : `command '${command}' not found`;
        return { success: false, summary: error, error, status: 'failed' };
      }
      const result = await runProcess({
        file,
        displayName: command,
        args,
        cwd,
        env: buildChildEnv({
          source: options.env,
          add: { MUSUBI_TASK_ID: task.id, MUSUBI_TASK_INSTRUCTION: task.instruction },
        }),
        stdin: task.instruction,
        timeoutMs: options.timeoutMs ?? DEFAULT_SHELL_TIMEOUT_MS,
        signal: run.signal,
        reaper: options.reaper,
        ...(options.graceMs !== undefined && { graceMs: options.graceMs }),
      });
      if (result.timedOut)
        return { success: false, summary: 'Timed out', error: 'Timed out', status: 'failed' };
      if (result.canceled)
        return { success: false, summary: 'Cancelled', error: 'Cancelled', status: 'cancelled' };
      if (result.exitCode === 0)
        return { success: true, summary: tail(result.stdout) || 'done', detail: tail(result.stdout) };
      const why = result.stderrTail.trim().split('\n').at(-1) ?? '';
      const error = `exit ${String(result.exitCode ?? result.signal)}${why === '' ? '' : `: ${why}`}`;
      return { success: false, summary: tail(result.stdout) || error, error, status: 'failed' };
    },
    cancel: () => Promise.resolve(), // the run's AbortSignal walks the stop ladder
  };
}
