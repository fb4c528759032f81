import { InvalidArgumentError, type Command } from 'commander';
import { MusubiError } from '../../core/errors.js';
import type { CliContext } from '../cli-context.js';

function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 65535) throw new InvalidArgumentError(`invalid port: '${value}'`);
  return n;
}

function milliseconds(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`invalid number of milliseconds: '${value}'`);
  return Number(value);
}

/** A client command: one HTTP call against the running agent server (spec neko.md 6). */
function client(
  neko: Command,
  ctx: CliContext,
  spec: string,
  description: string,
  request: (
    args: string[],
    flags: Record<string, unknown>,
  ) => { method: 'GET' | 'POST'; path: string; body?: unknown },
): Command {
  return neko
    .command(spec)
    .description(description)
    .option(
      '--port <port>',
      'HTTP port of the agent server (default: config neko.httpPort, else 48915)',
      port,
    )
    .action(async (...received: unknown[]) => {
      const command = received.at(-1) as Command; // commander passes the command object last
      const args = command.args;
      const flags = command.opts<Record<string, unknown>>();
      const { runClientCommand } = await import('../neko/neko-client.js');
      const portFlag = typeof flags['port'] === 'number' ? { port: flags['port'] } : {};
      ctx.setExitCode(await runClientCommand(ctx, { ...request(args, flags), ...portFlag }));
    });
}

/**
 * Registers `musubi neko …`: `serve` (musubi as N.E.K.O.'s agent server), `analyze` (play main for one
 * turn) and the HTTP client commands of spec neko.md 6. Heavy modules load inside the actions.
 */
export function registerNekoCommands(program: Command, ctx: CliContext): void {
  const neko = program
    .command('neko')
    .description('N.E.K.O. agent server: ZeroMQ bridge, background tasks, HTTP control API');

  neko
    .command('serve')
    .description('run the agent server (ZeroMQ connect + HTTP on 127.0.0.1) until SIGINT/SIGTERM')
    .option('--port <port>', 'HTTP port (default: config neko.httpPort, else 48915)', port)
    .option('--fresh', 'forget the persisted registry, flags and intent first')
    .action(async (flags: { port?: number; fresh?: boolean }) => {
      const { serveCommand } = await import('../neko/neko-serve.js');
      await serveCommand(ctx, flags);
    });

  neko
    .command('analyze <text>')
    .description(
      'act as main: bind the three sockets, publish one analyze_request, print the events until its result',
    )
    .option('--session <key>', 'session key (lanlan_name)', 'cli')
    .option('--timeout-ms <ms>', 'ack timeout per attempt', milliseconds, 800)
    .option('--wait-ms <ms>', 'how long to wait for the task result', milliseconds, 30_000)
    .action(async (text: string, flags: { session: string; timeoutMs: number; waitMs: number }) => {
      const { analyzeCommand } = await import('../neko/neko-analyze.js');
      ctx.setExitCode(await analyzeCommand(ctx, { text, ...flags }));
    });

  client(neko, ctx, 'state', 'GET /agent/state', () => ({ method: 'GET', path: '/agent/state' }));
  client(neko, ctx, 'flags', 'GET /agent/flags', () => ({ method: 'GET', path: '/agent/flags' }));
  client(neko, ctx, 'enable', 'switch the agent server on (set_agent_enabled true)', (_a, flags) => ({
    method: 'POST',
    path: '/agent/command',
    body: {
      command: 'set_agent_enabled',
      enabled: true,
      profile: parseJsonFlag('--profile', flags['profile']) ?? {},
    },
  })).option('--profile <json>', 'profile object (JSON)');
  client(
    neko,
    ctx,
    'disable',
    'switch the agent server off (set_agent_enabled false; ends all tasks)',
    () => ({
      method: 'POST',
      path: '/agent/command',
      body: { command: 'set_agent_enabled', enabled: false },
    }),
  );
  client(neko, ctx, 'flag <key> <state>', 'set one flag on or off (set_flag)', ([key = '', state = '']) => {
    if (state !== 'on' && state !== 'off')
      throw new InvalidArgumentError(`state must be on or off, got '${state}'`);
    return {
      method: 'POST',
      path: '/agent/command',
      body: { command: 'set_flag', key, value: state === 'on' },
    };
  });
  client(neko, ctx, 'tasks', 'GET /tasks', () => ({ method: 'GET', path: '/tasks' }));
  client(neko, ctx, 'task <id>', 'GET /tasks/{id}', ([id = '']) => ({
    method: 'GET',
    path: `/tasks/${encodeURIComponent(id)}`,
  }));
  client(neko, ctx, 'cancel <id>', 'POST /tasks/{id}/cancel', ([id = '']) => ({
    method: 'POST',
    path: `/tasks/${encodeURIComponent(id)}/cancel`,
  }));
  client(neko, ctx, 'complete <id>', 'complete a deferred task', ([id = '']) => ({
    method: 'POST',
    path: `/api/agent/tasks/${encodeURIComponent(id)}/complete`,
  }));
  client(neko, ctx, 'end-all', 'cancel and clear every task', () => ({
    method: 'POST',
    path: '/admin/control',
    body: { action: 'end_all' },
  }));
  client(
    neko,
    ctx,
    'exec <plugin_id>',
    'run a plugin entry directly (POST /plugin/execute)',
    ([pluginId = ''], flags) => ({
      method: 'POST',
      path: '/plugin/execute',
      body: {
        plugin_id: pluginId,
        ...(typeof flags['entry'] === 'string' && { entry_id: flags['entry'] }),
        ...(flags['args'] !== undefined && { args: parseJsonFlag('--args', flags['args']) }),
        ...(typeof flags['session'] === 'string' && { lanlan_name: flags['session'] }),
      },
    }),
  )
    .option('--entry <id>', 'entry id (default run)')
    .option('--args <json>', 'arguments (JSON object)')
    .option('--session <key>', 'session key (lanlan_name)');
  client(neko, ctx, 'channels', 'GET /channels', () => ({ method: 'GET', path: '/channels' }));
}

function parseJsonFlag(flag: string, value: unknown): unknown {
  if (typeof value !== 'string') return undefined;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new MusubiError('USAGE_INVALID', `${flag} must be JSON, got '${value}'`);
  }
}
