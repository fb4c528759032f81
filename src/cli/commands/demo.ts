import { Option, type Command } from 'commander';
import { LOG_LEVELS, type LogLevel } from '../../core/logger.js';
import { DEFAULT_DEMO_STATE_DIR } from '../../hub/demo/demo-config.js';
import type { CliContext } from '../cli-context.js';
import type { DemoFlags } from '../demo/run-demo-command.js';
import { parseNonNegativeInt } from '../option-parsers.js';

/** The agent CLIs `--agent` accepts (the scripted agent is the default). */
export const DEMO_AGENT_CHOICES = ['claude', 'codex', 'gemini', 'copilot', 'opencode', 'scripted'] as const;

function isLogLevel(value: string | undefined): value is LogLevel {
  return LOG_LEVELS.some((level) => level === value);
}

/** The global `--log-level` if it is a level, else `info` (the log goes to a file, not the terminal). */
export function demoLogLevel(ctx: CliContext): LogLevel {
  const level = ctx.globalOptions().logLevel;
  return isLogLevel(level) ? level : 'info';
}

/**
 * Registers `musubi demo` (what `npm start` runs): a hub on SQLite in the state folder, the dashboard,
 * and a mixed team (yadon, agent_sync, bus) finishing the bundled sample project on a scratch copy, with
 * one injected failure, progress bars per phase and a summary. Exit 0 when the sample's tests pass at
 * the end, 1 otherwise. The demo keeps its own store: `--store` and `--config` do not apply to it.
 */
export function registerDemoCommands(program: Command, ctx: CliContext): void {
  program
    .command('demo')
    .description(
      'watch a mixed agent team (yadon + agent_sync + bus) finish a sample project; what npm start runs',
    )
    .addOption(
      new Option(
        '--agent <cli>',
        'run the team on this agent CLI instead of the built-in scripted agent',
      ).choices(DEMO_AGENT_CHOICES),
    )
    .option('--keep', 'keep the hub and dashboard running after the run, until Ctrl-C')
    .option('--state <dir>', 'state folder: database, scratch project, log', DEFAULT_DEMO_STATE_DIR)
    .option('--port <port>', 'dashboard port (0 = any free port)', parseNonNegativeInt('--port'), 0)
    .action(async (flags: DemoFlags) => {
      const { runDemoCommand } = await import('../demo/run-demo-command.js');
      ctx.setExitCode(await runDemoCommand(ctx, flags, demoLogLevel(ctx)));
    });
}
