import { Argument, type Command } from 'commander';
import type { PyJsonInput } from '../../core/python/json-dumps.js';
import type { CliContext } from '../cli-context.js';
import { parsePyInt } from './option-parsers.js';

interface Target {
  readonly port: number;
  readonly host: string;
}
type Request = { readonly [key: string]: PyJsonInput | undefined };

const PHASE_CHOICES = ['IMPLEMENT', 'TEST', 'DISCUSS', 'SHUTDOWN'];

/** Adds the connection flags every client subcommand accepts after its arguments. */
function client(group: Command, name: string, description: string): Command {
  return group
    .command(name)
    .description(description)
    .option('--port <port>', 'server port', parsePyInt, 9800)
    .option('--host <host>', 'server host', '127.0.0.1');
}

async function run(
  ctx: CliContext,
  target: Target,
  request: Request,
  extra: { isPeek?: boolean; replyTimeoutMs?: number; isPaged?: boolean } = {},
): Promise<void> {
  const { runClientCommand } = await import('./client-command.js');
  const code = await runClientCommand({
    host: target.host,
    port: target.port,
    request,
    stdout: ctx.stdout,
    stderr: ctx.stderr,
    ...extra,
  });
  ctx.setExitCode(code);
}

/**
 * Registers the agent_sync v6 client subcommands (`join`, `status`, ... `shutdown`): one request each,
 * the reply printed as indented JSON (`OK` when empty), `ERROR: <error>` and exit 1 on failure.
 */
export function registerAgentSyncClientCommands(group: Command, ctx: CliContext): void {
  client(group, 'join', 'join the session as <agent>')
    .argument('<agent>')
    .action((agent: string, o: Target) => run(ctx, o, { cmd: 'join', agent }));
  client(group, 'status', 'show phase, round, agents, implementer and the last test result').action(
    (o: Target) => run(ctx, o, { cmd: 'status' }),
  );
  client(group, 'peek', 'count pending messages without consuming them (no connect retry)')
    .argument('<agent>')
    .action((agent: string, o: Target) => run(ctx, o, { cmd: 'peek', agent }, { isPeek: true }));
  client(group, 'send', 'send a message to one agent')
    .argument('<from_agent>')
    .argument('<to_agent>')
    .argument('<message>')
    .action((from: string, to: string, text: string, o: Target) =>
      run(ctx, o, { cmd: 'send', agent: from, to, text }),
    );
  client(group, 'broadcast', 'send a message to every other joined agent')
    .argument('<from_agent>')
    .argument('<message>')
    .action((from: string, text: string, o: Target) => run(ctx, o, { cmd: 'broadcast', agent: from, text }));
  client(group, 'listen', 'wait for messages (blocking)')
    .argument('<agent>')
    .option('--timeout <seconds>', 'seconds to wait', parsePyInt, 300)
    .action((agent: string, o: Target & { timeout: number }) =>
      run(
        ctx,
        o,
        { cmd: 'listen', agent, timeout: o.timeout },
        o.timeout > 0 ? { replyTimeoutMs: (o.timeout + 5) * 1000 } : {},
      ),
    );
  client(group, 'impl-done', 'the implementer is done: IMPLEMENT -> TEST')
    .argument('<agent>')
    .option('--summary <text>', 'what was implemented', '')
    .action((agent: string, o: Target & { summary: string }) =>
      run(ctx, o, { cmd: 'impl-done', agent, summary: o.summary }),
    );
  client(group, 'test-result', 'report the test run (TEST -> DISCUSS)')
    .argument('<agent>')
    .option('--passed', 'the tests passed', false)
    .option('--output <text>', 'test output', '')
    .option('--failures <failure...>', 'failing tests', [])
    .action((agent: string, o: Target & { passed: boolean; output: string; failures: string[] }) =>
      run(ctx, o, { cmd: 'test-result', agent, passed: o.passed, output: o.output, failures: o.failures }),
    );
  client(group, 'discuss', 'post to the discussion (DISCUSS phase)')
    .argument('<agent>')
    .argument('<text>')
    .action((agent: string, text: string, o: Target) => run(ctx, o, { cmd: 'discuss', agent, text }));
  client(group, 'discuss-done', 'done discussing; the last one starts the next round')
    .argument('<agent>')
    .option('--next-impl <name>', 'who implements next round', '')
    .action((agent: string, o: Target & { nextImpl: string }) =>
      run(ctx, o, { cmd: 'discuss-done', agent, next_implementer: o.nextImpl }),
    );
  client(group, 'get-discussion', 'print the discussion log (all pages)')
    .option('--round <n>', 'only this round', parsePyInt)
    .action((o: Target & { round?: number }) =>
      run(ctx, o, { cmd: 'get-discussion', round: o.round }, { isPaged: true }),
    );
  client(group, 'say', 'a human message to one agent (--to) or to everyone')
    .argument('<text>')
    .option('--to <name>', 'recipient (any name)')
    .action((text: string, o: Target & { to?: string }) =>
      run(ctx, o, { cmd: 'say', text, to: o.to === '' ? undefined : o.to }),
    );
  client(group, 'write-log', "append a section to the round's log file")
    .argument('<agent>')
    .argument('<text>')
    .option('--section <name>', 'section title', '')
    .action((agent: string, text: string, o: Target & { section: string }) =>
      run(ctx, o, { cmd: 'write-log', agent, text, section: o.section }),
    );
  client(group, 'set-phase', 'force a phase')
    .addArgument(new Argument('<phase>').choices(PHASE_CHOICES))
    .action((phase: string, o: Target) => run(ctx, o, { cmd: 'set-phase', phase }));
  client(group, 'heartbeat', 'record that <agent> is alive')
    .argument('<agent>')
    .action((agent: string, o: Target) => run(ctx, o, { cmd: 'heartbeat', agent }));
  client(group, 'shutdown', 'end the session (phase SHUTDOWN; the server keeps running)')
    .option('--reason <text>', 'why', 'completed')
    .action((o: Target & { reason: string }) => run(ctx, o, { cmd: 'shutdown', reason: o.reason }));
}
