import { Command, CommanderError } from 'commander';
import { isMusubiError } from '../core/errors.js';
import { createCliContext } from './create-cli-context.js';
import { registerAgentCommands } from './commands/agent.js';
import { registerAgentSyncCommands } from './commands/agent-sync.js';
import { registerBusCommands } from './commands/bus.js';
import { registerDashboardCommands } from './commands/dashboard.js';
import { registerDemoCommands } from './commands/demo.js';
import { registerMcpCommands } from './commands/mcp.js';
import { registerNekoCommands } from './commands/neko.js';
import { registerIgniteCommands } from './commands/ignite.js';
import { registerUpCommand } from './commands/up.js';
import { registerYadonCommands } from './commands/yadon.js';
import { version } from './version.js';

/** Builds the `musubi` program. Command modules register themselves; heavy code loads inside actions. */
export function buildProgram(ctx: ReturnType<typeof createCliContext>): Command {
  const program = new Command('musubi')
    .description('A durable message bus and orchestrator for teams of AI coding agents')
    .version(version, '-V, --version')
    .option('--store <url>', 'store URL: memory:, sqlite:<path>, nats://host:port (env MUSUBI_STORE)')
    .option('-c, --config <path>', 'config file (default: ./musubi.yaml when present)')
    .option('--log-level <level>', 'trace|debug|info|warn|error|fatal|silent (env MUSUBI_LOG_LEVEL)')
    .showHelpAfterError()
    .exitOverride();
  ctx.bindProgram(program);
  registerUpCommand(program, ctx);
  registerBusCommands(program, ctx);
  registerDashboardCommands(program, ctx);
  registerDemoCommands(program, ctx);
  registerAgentCommands(program, ctx);
  registerAgentSyncCommands(program, ctx);
  registerYadonCommands(program, ctx);
  registerMcpCommands(program, ctx);
  registerIgniteCommands(program, ctx);
  registerNekoCommands(program, ctx);
  return program;
}

async function main(argv: readonly string[]): Promise<void> {
  const ctx = createCliContext();
  const program = buildProgram(ctx);
  // Library timers are unref'd so they never hold a process open; the CLI holds it open itself until
  // its command settles (otherwise a waiting `bus receive` or `up` would end with Node's exit code 13).
  const keepAlive = setInterval(() => undefined, 2 ** 30);
  try {
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
