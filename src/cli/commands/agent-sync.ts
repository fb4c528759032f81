import { Argument, Option, type Command } from 'commander';
import { registerAgentSyncClientCommands } from '../agent-sync/client-subcommands.js';
import { parsePyFloat, parsePyInt } from '../agent-sync/option-parsers.js';
import type { CliContext } from '../cli-context.js';
import { untilStopSignal } from '../stop-signals.js';

interface ServeFlags {
  readonly host?: string;
  readonly unauthenticatedNetworkAccess?: boolean;
  readonly port?: number;
  readonly fresh?: boolean;
  readonly staleAfter?: number;
}

async function serve(ctx: CliContext, flags: ServeFlags): Promise<void> {
  const config = await ctx.loadConfig();
  const [{ agentSyncSetup }, { startAgentSyncServer }, { createSystemClock }, { createIdGenerator }] =
    await Promise.all([
      import('../../hub/gateway-setups.js'),
      import('../../hub/start-agent-sync-server.js'),
      import('../../core/clock.js'),
      import('../../core/ids.js'),
    ]);
  const envStale = ctx.env['AGENT_SYNC_STALE_AFTER'];
  const staleAfterS = flags.staleAfter ?? (envStale === undefined ? 120 : parsePyFloat(envStale));
  const setup = agentSyncSetup(config, ctx.env, process.cwd());
  const clock = createSystemClock();
  const hub = await startAgentSyncServer({
    config,
    cwd: process.cwd(),
    logger: ctx.logger(config),
    clock,
    ids: createIdGenerator(clock),
    setup: {
      ...setup,
      ...(flags.host !== undefined && { host: flags.host }),
      ...(flags.unauthenticatedNetworkAccess === true && { isNetworkAccessAllowed: true }),
      ...(flags.port !== undefined && { port: flags.port }),
      isFresh: flags.fresh === true,
      staleAfterMs: staleAfterS * 1000,
    },
  });
  try {
    const address = hub.gateways[0]?.address();
    if (address?.kind === 'tcp') {
      ctx.stdout.write(
        `agent-sync listening on ${address.host}:${address.port} (agents: ${setup.agents.join(', ')})\n`,
      );
    }
    await untilStopSignal();
  } finally {
    await hub.close();
  }
}

async function hook(ctx: CliContext, kind: string, format: string): Promise<void> {
  const { runHook, HOOK_KINDS, HOOK_FORMATS } = await import('../agent-sync/hooks.js');
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.stdin)
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  const validKind = HOOK_KINDS.find((k) => k === kind) ?? 'block-questions';
  const validFormat = HOOK_FORMATS.find((f) => f === format) ?? 'copilot';
  const result = await runHook({
    kind: validKind,
    format: validFormat,
    stdinText: Buffer.concat(chunks).toString('utf8'),
    env: ctx.env,
    cwd: process.cwd(),
  });
  ctx.stdout.write(result.stdout);
  ctx.stderr.write(result.stderr);
  ctx.setExitCode(result.exitCode);
}

function abortOnSignal(): AbortController {
  const controller = new AbortController();
  void untilStopSignal().then(() => controller.abort());
  return controller;
}

function notifyDir(ctx: CliContext): string {
  return ctx.env['AGENT_SYNC_NOTIFY_DIR'] ?? process.cwd();
}

function registerTools(group: Command, ctx: CliContext): void {
  const envFormat = ctx.env['AGENT_SYNC_HOOK_FORMAT'];
  group
    .command('hook')
    .description('editor hook: read the hook event JSON on stdin, print the decision JSON')
    .addArgument(new Argument('<kind>').choices(['block-stop', 'check-messages', 'block-questions']))
    .addOption(
      new Option('--format <format>', 'hook output shape (env AGENT_SYNC_HOOK_FORMAT)')
        .choices(['copilot', 'claude'])
        .default(envFormat === 'claude' ? 'claude' : 'copilot'),
    )
    .action((kind: string, o: { format: string }) => hook(ctx, kind, o.format));
  group
    .command('monitor')
    .description('live read-only view: phase, round, pending mail, discussion, events')
    .option('--port <port>', 'server port', parsePyInt, 9800)
    .option('--host <host>', 'server host', '127.0.0.1')
    .option('--interval <seconds>', 'seconds between polls', parsePyFloat, 2.0)
    .action(async (o: { port: number; host: string; interval: number }) => {
      const { runMonitor } = await import('../agent-sync/monitor.js');
      const isTty = 'isTTY' in ctx.stdout && ctx.stdout.isTTY === true;
      const isPlain = ctx.env['NO_COLOR'] !== undefined || ctx.env['TERM'] === 'dumb' || !isTty;
      const { signal } = abortOnSignal();
      const options = { host: o.host, port: o.port, intervalMs: o.interval * 1000, isPlain, signal };
      ctx.setExitCode(await runMonitor({ ...options, stdout: ctx.stdout }));
    });
  group
    .command('notifier')
    .description('write phase-change notifications for <agent> to files; heartbeat; never listens')
    .argument('<agent>')
    .option('--port <port>', 'server port', parsePyInt, 9800)
    .option('--host <host>', 'server host', '127.0.0.1')
    .option('--interval <seconds>', 'seconds between polls', parsePyFloat, 5.0)
    .action(async (agent: string, o: { port: number; host: string; interval: number }) => {
      const { runNotifier } = await import('../agent-sync/notifier.js');
      const { signal } = abortOnSignal();
      const target = {
        agent,
        host: o.host,
        port: o.port,
        intervalMs: o.interval * 1000,
        dir: notifyDir(ctx),
      };
      ctx.setExitCode(await runNotifier({ ...target, stdout: ctx.stdout, stderr: ctx.stderr, signal }));
    });
  group
    .command('check-notify')
    .description("print and mark read <agent>'s notifications")
    .argument('<agent>')
    .action(async (agent: string) => {
      const { checkNotify } = await import('../agent-sync/notifier.js');
      ctx.stdout.write(`${await checkNotify(notifyDir(ctx), agent)}\n`);
    });
  group
    .command('clear-notify')
    .description("delete <agent>'s notification files")
    .argument('<agent>')
    .action(async (agent: string) => {
      const { clearNotify } = await import('../agent-sync/notifier.js');
      await clearNotify(notifyDir(ctx), agent);
      ctx.stdout.write('OK\n');
    });
}

/**
 * Registers `musubi agent-sync`: `serve` (the TCP gateway standalone), the v6 client subcommands,
 * `hook`, `monitor`, `notifier`, `check-notify` and `clear-notify`. Without a subcommand it prints
 * help on stdout and exits 1, as the original client did.
 */
export function registerAgentSyncCommands(program: Command, ctx: CliContext): void {
  const group = program
    .command('agent-sync')
    .description('agent_sync v6 drop-in: mailbox server with rounds, client, hooks, monitor')
    .action(() => {
      ctx.stdout.write(group.helpInformation());
      ctx.setExitCode(1);
    });
  group
    .command('serve')
    .description(
      'run the agent_sync TCP server (state in the configured store; AGENTS_LIST names the agents)',
    )
    .option('--host <host>', 'listen address (default 127.0.0.1)')
    .option(
      '--unauthenticated-network-access',
      'allow a --host beyond loopback: agent_sync has no authentication, anyone who can connect drives the session',
    )
    .option('--port <port>', 'listen port (default 9800)', parsePyInt)
    .option('--fresh', 'discard the persisted session state and the agents mailboxes')
    .option(
      '--stale-after <seconds>',
      'status marks agents stale after this long (env AGENT_SYNC_STALE_AFTER)',
      parsePyFloat,
    )
    .action((flags: ServeFlags) => serve(ctx, flags));
  registerAgentSyncClientCommands(group, ctx);
  registerTools(group, ctx);
}
