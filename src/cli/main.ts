import { Command, CommanderError, Option } from 'commander';
import { isMusubiError } from '../core/errors.js';
import { LOG_FORMATS } from '../core/logger.js';
import type { CliContext } from './cli-context.js';
import { createCliContext } from './create-cli-context.js';
import { version } from './version.js';

type Register = (program: Command, ctx: CliContext) => void;

/**
 * Every top-level command and the module that registers it. Only the module of the command being run
 * is loaded (hooks and tools run once per agent action, so start-up time matters); `--help` and an
 * unknown command load them all.
 */
const COMMANDS: Readonly<Record<string, () => Promise<Register>>> = {
  up: async () => (await import('./commands/up.js')).registerUpCommand,
  bus: async () => (await import('./commands/bus.js')).registerBusCommands,
  dashboard: async () => (await import('./commands/dashboard.js')).registerDashboardCommands,
  demo: async () => (await import('./commands/demo.js')).registerDemoCommands,
  agent: async () => (await import('./commands/agent.js')).registerAgentCommands,
  'agent-sync': async () => (await import('./commands/agent-sync.js')).registerAgentSyncCommands,
  yadon: async () => (await import('./commands/yadon.js')).registerYadonCommands,
  ignite: async () => (await import('./commands/ignite.js')).registerIgniteCommands,
  mcp: async () => (await import('./commands/mcp.js')).registerMcpCommands,
  neko: async () => (await import('./commands/neko.js')).registerNekoCommands,
  dev: async () => (await import('./commands/dev.js')).registerDevCommands,
  init: async () => (await import('./commands/init.js')).registerInitCommand,
  run: async () => (await import('./commands/run.js')).registerRunCommands,
  runs: async () => (await import('./commands/run.js')).registerRunCommands,
  store: async () => (await import('./commands/store.js')).registerStoreCommands,
};

/** Global options that take a value, so the command name is found after them. */
const VALUED_GLOBALS = new Set(['--store', '-c', '--config', '--log-level', '--log-format']);

/** The command named on the command line, if it is one of ours. */
function commandOf(argv: readonly string[]): string | undefined {
  for (let i = 2; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (VALUED_GLOBALS.has(arg)) i++;
    else if (!arg.startsWith('-')) return Object.hasOwn(COMMANDS, arg) ? arg : undefined;
  }
  return undefined;
}

/** Builds the `musubi` program with the named command, or with every command when none is named. */
async function buildProgram(
  ctx: ReturnType<typeof createCliContext>,
  command: string | undefined,
): Promise<Command> {
  const program = new Command('musubi')
    .description('A durable message bus and orchestrator for teams of AI coding agents')
    .version(version, '-V, --version')
    .option('--store <url>', 'store URL: memory:, sqlite:<path>, nats://host:port (env MUSUBI_STORE)')
    .option('-c, --config <path>', 'config file (default: ./musubi.yaml when present)')
    .option('--log-level <level>', 'trace|debug|info|warn|error|fatal|silent (env MUSUBI_LOG_LEVEL)')
    .addOption(
      new Option(
        '--log-format <format>',
        'log lines on stderr (env MUSUBI_LOG_FORMAT; default: pretty on a terminal, else json)',
      ).choices(LOG_FORMATS),
    )
    .showHelpAfterError()
    .exitOverride();
  ctx.bindProgram(program);
  const names = command === undefined ? Object.keys(COMMANDS) : [command];
  const registers = await Promise.all(names.map((name) => COMMANDS[name]?.() ?? Promise.resolve(undefined)));
  for (const register of new Set(registers)) register?.(program, ctx);
  return program;
}

async function main(argv: readonly string[]): Promise<void> {
  // A reader that went away (`musubi … --watch | head`) ends the command quietly, as it ends any Unix
  // filter; any other stdout failure stays an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(0);
  });
  const ctx = createCliContext();
  // Library timers are unref'd so they never hold a process open; the CLI holds it open itself until
  // its command settles (otherwise a waiting `bus receive` or `up` would end with Node's exit code 13).
  const keepAlive = setInterval(() => undefined, 2 ** 30);
  try {
    const program = await buildProgram(ctx, commandOf(argv));
    await program.parseAsync([...argv]);
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end through exitOverride with exit code 0.
      process.exitCode = err.exitCode === 0 ? 0 : 2;
      return;
    }
    if (isMusubiError(err)) {
      process.stderr.write(`musubi: ${err.code}: ${err.message}\n`);
      process.exitCode = err.code === 'USAGE_INVALID' ? 2 : 1;
      return;
    }
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`musubi: INTERNAL: ${message}\n`);
    process.exitCode = 1;
  } finally {
    clearInterval(keepAlive);
  }
}

await main(process.argv);
