import { Readable, Writable } from 'node:stream';
import type { Command } from 'commander';
import type { Config } from '../../core/config.schema.js';
import { MusubiError } from '../../core/errors.js';
import { LOG_LEVELS, type LogLevel } from '../../core/logger.js';
import { assertMailboxName } from '../../core/names.js';
import type { CliContext } from '../cli-context.js';
import { parseNonNegativeInt } from '../option-parsers.js';
import { version } from '../version.js';
import { stopSignals } from '../stop-signals.js';

interface McpFlags {
  readonly agent: string;
  readonly lease?: number;
}

/**
 * stdout is the MCP channel, so logs stay on stderr and default to `warn` there (an MCP client shows a
 * server's stderr as noise); `--log-level` or MUSUBI_LOG_LEVEL still choose any level.
 */
function logLevel(ctx: CliContext, config: Config): LogLevel {
  const isExplicit = ctx.globalOptions().logLevel !== undefined || ctx.env['MUSUBI_LOG_LEVEL'] !== undefined;
  if (isExplicit) return config.log.level;
  return LOG_LEVELS.indexOf(config.log.level) > LOG_LEVELS.indexOf('warn') ? config.log.level : 'warn';
}

async function serve(ctx: CliContext, flags: McpFlags): Promise<void> {
  const agent = assertMailboxName(flags.agent);
  const { stdin, stdout } = ctx;
  if (!(stdin instanceof Readable) || !(stdout instanceof Writable))
    throw new MusubiError('INTERNAL', 'musubi mcp needs stdin and stdout streams');
  const [config, { openMcpServer }, { createSystemClock }, { createIdGenerator }] = await Promise.all([
    ctx.loadConfig(),
    import('../../hub/open-mcp-server.js'),
    import('../../core/clock.js'),
    import('../../core/ids.js'),
  ]);
  const clock = createSystemClock();
  await using mcp = await openMcpServer({
    config,
    cwd: process.cwd(),
    logger: ctx.logger({ ...config, log: { level: logLevel(ctx, config) } }),
    clock,
    ids: createIdGenerator(clock),
    agent,
    input: stdin,
    output: stdout,
    version,
    env: ctx.env,
    ...(flags.lease === undefined ? {} : { leaseMs: flags.lease }),
  });
  const { server } = mcp;
  const signals = stopSignals();
  void signals.stopped.then(() => server.close()).catch(() => undefined);
  try {
    await server.start();
    await server.ended;
  } finally {
    signals.dispose();
  }
}

/** Registers `musubi mcp --agent <name>`: the MCP server over stdio for one agent (docs/mcp.md). */
export function registerMcpCommands(program: Command, ctx: CliContext): void {
  program
    .command('mcp')
    .description(
      'serve the MCP tools (send, broadcast, receive, ack, peek, status, tasks, say) over stdio for one agent',
    )
    .requiredOption('--agent <name>', 'the agent this server acts for (its mailbox and sender name)')
    .option(
      '--lease <ms>',
      'default lease of the receive tool (default 600000)',
      parseNonNegativeInt('--lease'),
    )
    .action((flags: McpFlags) => serve(ctx, flags));
}
