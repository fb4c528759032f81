import { InvalidArgumentError, Option, type Command } from 'commander';
import { parsePyInt } from '../../core/python/numbers.js';
import type { CliContext } from '../cli-context.js';

/** argparse `type=int`: Python int() rules; anything else is a usage error (exit 2). */
function pyInt(value: string): number {
  const n = parsePyInt(value);
  if (n === undefined || !Number.isSafeInteger(n))
    throw new InvalidArgumentError(`invalid int value: '${value}'`);
  return n;
}

interface SayFlags {
  readonly type: string;
  readonly duration: number;
}

function sayCommand(yadon: Command, ctx: CliContext, name: 'say' | '_say'): void {
  yadon
    .command(`${name} <number> <message>`)
    .description(
      name === 'say' ? 'show a speech bubble on pet <number>' : 'like say, silent and never failing',
    )
    // As with argparse, a message like "- done" is text, not an option.
    .allowUnknownOption()
    .option('--type <type>', 'bubble type', 'info')
    .option('--duration <ms>', 'how long the bubble shows (ms)', pyInt, 5000)
    .action(async (rawNumber: string, message: string, flags: SayFlags) => {
      const request = { number: pyInt(rawNumber), message, type: flags.type, durationMs: flags.duration };
      const say = await import('../yadon/say-commands.js');
      if (name === '_say') await say.quietSayCommand(ctx, request);
      else ctx.setExitCode(await say.sayCommand(ctx, request));
    });
}

function isMultiLlm(command: Command, flags: { multiLlm?: boolean }): boolean {
  return flags.multiLlm === true || command.parent?.opts<{ multiLlm?: boolean }>().multiLlm === true;
}

/**
 * Registers `musubi yadon …` (also installed as the `yadon` command): the yadon-agents tools of spec
 * yadon.md 6 — start, stop, status, restart, say, _send, _status, _result, _say, _restart — plus
 * `host` (agent host only), `serve-agent` (one agent on any socket) and `bubbles` (live speech bubbles).
 */
export function registerYadonCommands(program: Command, ctx: CliContext): void {
  const yadon = program
    .command('yadon')
    .description('yadon-agents drop-in: manager and workers on Unix sockets (three-phase team)')
    .option('--multi-llm', 'give the workers different LLM backends');

  for (const name of ['start', 'restart'] as const) {
    yadon
      .command(`${name} [work_dir]`, { isDefault: name === 'start' })
      .description(name === 'start' ? 'start the agents and the coordinator (default)' : 'stop, then start')
      .option('--multi-llm', 'give the workers different LLM backends')
      .action(async (workDir: string | undefined, flags: { multiLlm?: boolean }, command: Command) => {
        const life = await import('../yadon/lifecycle-commands.js');
        if (name === 'restart') await life.stopCommand(ctx);
        const options = { isMultiLlm: isMultiLlm(command, flags), ...(workDir !== undefined && { workDir }) };
        ctx.setExitCode(await life.startCommand(ctx, options));
      });
  }
  yadon
    .command('stop')
    .description("stop this socket directory's agent host")
    .action(async () => (await import('../yadon/lifecycle-commands.js')).stopCommand(ctx));
  yadon
    .command('status [agent_name]')
    .description('show the status of the manager (or one agent)')
    .action(async (agent: string | undefined) => {
      const { statusCommand } = await import('../yadon/status-commands.js');
      ctx.setExitCode(await statusCommand(ctx, agent));
    });
  sayCommand(yadon, ctx, 'say');
  yadon
    .command('_send <instruction>')
    .description('send a task to the manager; prints one JSON line')
    .allowUnknownOption()
    .option('--project-dir <dir>', 'project directory of the task')
    .action(async (instruction: string, flags: { projectDir?: string }) => {
      const { sendCommand } = await import('../yadon/send-commands.js');
      await sendCommand(
        ctx,
        instruction,
        flags.projectDir === undefined ? {} : { projectDir: flags.projectDir },
      );
    });
  yadon
    .command('_status [agent_name]')
    .description('status as one JSON line')
    .action(async (agent: string | undefined) =>
      (await import('../yadon/status-commands.js')).statusJsonCommand(ctx, agent),
    );
  yadon
    .command('_result <task_id>')
    .description("fetch a task's stored result as one JSON line")
    .action(async (taskId: string) => (await import('../yadon/send-commands.js')).resultCommand(ctx, taskId));
  sayCommand(yadon, ctx, '_say');
  yadon
    .command('_restart')
    .description('restart the agent host with its recorded settings')
    .action(async () => (await import('../yadon/lifecycle-commands.js')).restartAgentsCommand(ctx));
  yadon
    .command('host [work_dir]')
    .description('start only the agent host (a daemon unless --foreground)')
    .option('--foreground', 'run in this process until SIGINT/SIGTERM')
    .action(async (workDir: string | undefined, flags: { foreground?: boolean }) => {
      if (flags.foreground !== true) {
        const { hostDaemonCommand } = await import('../yadon/lifecycle-commands.js');
        ctx.setExitCode(await hostDaemonCommand(ctx, workDir));
        return;
      }
      const [{ runYadonHost }, { resolve }] = await Promise.all([
        import('../yadon/run-host.js'),
        import('node:path'),
      ]);
      const code = await runYadonHost({
        ctx,
        workDir: resolve(workDir ?? '.'),
        report: (report) => {
          if (process.send === undefined) return;
          process.send(report);
          if (report.kind === 'ready') process.disconnect();
        },
      });
      ctx.setExitCode(code);
    });
  yadon
    .command('serve-agent')
    .description('serve one agent on an arbitrary socket path (diagnostics, tests)')
    .addOption(
      new Option('--role <role>', 'worker or manager').choices(['worker', 'manager']).makeOptionMandatory(),
    )
    .option('--number <n>', 'worker number', pyInt)
    .requiredOption('--socket <path>', 'socket path to serve')
    .option('--work-dir <dir>', 'default project directory', '.')
    .action(
      async (flags: { role: 'worker' | 'manager'; number?: number; socket: string; workDir: string }) => {
        const [{ serveAgentCommand }, { resolve }] = await Promise.all([
          import('../yadon/serve-agent.js'),
          import('node:path'),
        ]);
        const options = {
          role: flags.role,
          socket: resolve(flags.socket),
          workDir: resolve(flags.workDir),
          ...(flags.number !== undefined && { number: flags.number }),
        };
        ctx.setExitCode(await serveAgentCommand(ctx, options));
      },
    );
  yadon
    .command('bubbles')
    .description('print speech bubbles live (agent.bubble events of the store)')
    .option('--all', 'replay the stored bubbles first')
    .action(async (flags: { all?: boolean }) =>
      (await import('../yadon/bubbles-command.js')).bubblesCommand(ctx, { isReplay: flags.all === true }),
    );
}
