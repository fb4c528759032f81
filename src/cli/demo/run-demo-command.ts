import { closeSync, mkdirSync, openSync } from 'node:fs';
import type { AgentBackend } from '../../agents/agent-runner.js';
import { installedBackends } from '../../agents/selection/installed-backends.js';
import { CLI_BACKENDS } from '../../agents/cli/cli-backends.js';
import { createSystemClock } from '../../core/clock.js';
import { MusubiError } from '../../core/errors.js';
import { createLogger, type LogLevel } from '../../core/logger.js';
import { demoPaths } from '../../hub/demo/demo-config.js';
import { runDemo } from '../../hub/demo/run-demo.js';
import type { CliContext } from '../cli-context.js';
import { formatReady, formatSummary } from './demo-text.js';
import { createProgressView } from './progress-view.js';
import { claudeRootNotice } from '../../agents/claude/claude-backend.js';
import { stopSignals } from '../stop-signals.js';

/** Flags of `musubi demo`. */
export interface DemoFlags {
  readonly agent?: AgentBackend;
  readonly keep?: boolean;
  readonly state: string;
  readonly port: number;
}

function isTty(out: NodeJS.WritableStream): { isTty: boolean; columns: number } {
  const tty = 'isTTY' in out && out.isTTY === true;
  const columns = 'columns' in out && typeof out.columns === 'number' ? out.columns : 100;
  return { isTty: tty, columns };
}

/**
 * `musubi demo`: checks that a chosen agent CLI is installed (AGENT_NOT_FOUND otherwise), opens the log
 * file in the state folder, runs the demo with progress bars on stdout, prints the summary, then stops
 * the hub — or, with `--keep`, waits for Ctrl-C first. Ctrl-C during the run stops it early. Resolves
 * the exit code: 0 when the goal was met, 1 otherwise.
 */
export async function runDemoCommand(ctx: CliContext, flags: DemoFlags, logLevel: LogLevel): Promise<number> {
  const backend = flags.agent ?? 'scripted';
  if (backend !== 'scripted' && !(await installedBackends(ctx.env)).has(backend)) {
    throw new MusubiError(
      'AGENT_NOT_FOUND',
      `agent CLI '${CLI_BACKENDS[backend].command}' not found on PATH (musubi demo --agent ${backend})`,
    );
  }
  // Said before the run starts, not found out halfway: as root claude may edit files but not run commands.
  const rootNotice =
    backend === 'claude' ? claudeRootNotice(process.getuid?.() === 0, ctx.env, undefined) : undefined;
  if (rootNotice !== undefined) ctx.stderr.write(`musubi: warning: ${rootNotice}\n`);
  const cwd = process.cwd();
  const paths = demoPaths(cwd, flags.state);
  mkdirSync(paths.stateDir, { recursive: true });
  const logFd = openSync(paths.logFile, 'w', 0o600);
  const signals = stopSignals();
  const interrupt = new AbortController();
  void signals.stopped.then((signal) => interrupt.abort(new Error(`interrupted by ${signal}`)));
  const { isTty: tty, columns } = isTty(ctx.stdout);
  const isColor = tty && ctx.env['NO_COLOR'] === undefined && ctx.env['TERM'] !== 'dumb';
  const view = createProgressView({ out: ctx.stdout, isTty: tty, isColor, columns });
  try {
    const run = await runDemo({
      cwd,
      paths,
      backend,
      env: ctx.env,
      logger: createLogger({ level: logLevel, fd: logFd }),
      logLevel,
      clock: createSystemClock(),
      nodePath: process.execPath,
      dashboardPort: flags.port,
      signal: interrupt.signal,
      onProgress: (change) => view.update(change),
      onReady: (ready) => view.lines(formatReady(ready, cwd)),
    });
    try {
      view.close();
      const isKept = flags.keep === true && !interrupt.signal.aborted;
      const summary = formatSummary(run.report, { dashboardUrl: run.dashboardUrl, isKept, cwd });
      ctx.stdout.write(`${summary.join('\n')}\n`);
      if (isKept) {
        await signals.stopped;
        ctx.stdout.write('musubi demo: stopping the hub\n');
      }
    } finally {
      await run.close();
    }
    return run.report.isSuccess ? 0 : 1;
  } finally {
    signals.dispose();
    closeSync(logFd);
  }
}
