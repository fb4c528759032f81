import type { Command } from 'commander';
import { MusubiError } from '../../core/errors.js';
import type { IgnitePaths } from '../../gateways/ignite/ignite-paths.js';
import type { CliContext } from '../cli-context.js';
import { parseNonNegativeInt } from '../option-parsers.js';

const DEFAULT_WORKERS = 3;
const STOP_TIMEOUT_MS = 60_000;

interface WorkspaceFlags {
  readonly workspace?: string;
}

async function locate(
  ctx: CliContext,
  flags: WorkspaceFlags,
  isMonitor = false,
): Promise<{ workspace: string; paths: IgnitePaths }> {
  const { IgnitePaths, resolveRuntimeDir, resolveWorkspace } =
    await import('../../gateways/ignite/ignite-paths.js');
  const workspace = resolveWorkspace({
    ...(flags.workspace !== undefined && { flag: flags.workspace }),
    env: ctx.env,
    cwd: process.cwd(),
    isMonitor,
  });
  return { workspace, paths: new IgnitePaths(resolveRuntimeDir(workspace, ctx.env)) };
}

function firstOperand(argv: readonly string[]): string | undefined {
  for (let i = 2; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (['--store', '-c', '--config', '--log-level', '--log-format'].includes(arg)) i++;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

/** A raw tool subcommand: every argument after its name reaches the tool unchanged (argparse rules). */
function rawTool(
  parent: Command,
  tool: {
    readonly name: string;
    readonly description: string;
    readonly run: (args: string[]) => Promise<number>;
    /** Commander allows pass-through only under positional options, which are on only for `ignite` runs. */
    readonly isPassThrough: boolean;
  },
  ctx: CliContext,
): void {
  const command = parent
    .command(tool.name)
    .description(tool.description)
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments();
  if (tool.isPassThrough) command.passThroughOptions();
  command.argument('[args...]').action(async (args: string[]) => ctx.setExitCode(await tool.run(args)));
}

/**
 * Registers `musubi ignite …`: the drop-in tools (`mime`, `send`, `monitor`) with IGNITE's exact grammar,
 * output and exit codes, and the organisation commands (`init`, `start`, `plan`, `notify`, `work-on`,
 * `status`, `stop`). Global options must come before `ignite` (everything after it belongs to IGNITE's
 * grammar, e.g. `plan -c`). Heavy modules load inside the actions.
 */
export function registerIgniteCommands(program: Command, ctx: CliContext): void {
  // IGNITE's tools own every argument after `ignite` (`-c`, `--`, `-h` included): only when `ignite` is the
  // command does the program stop reading its global options past the command name.
  const isIgniteRun = firstOperand(process.argv) === 'ignite';
  if (isIgniteRun) program.enablePositionalOptions();
  const ignite = program
    .command('ignite')
    .description('IGNITE drop-in: MIME message tools, send tool, queue monitor and the role organisation');
  if (isIgniteRun) ignite.passThroughOptions();
  rawTool(
    ignite,
    {
      name: 'mime',
      description:
        'the MIME message tool: build|parse|extract-body|update-status|update-header|remove-header (ignite_mime grammar)',
      run: async (args) => {
        const [{ runMimeTool }, { processToolIo }] = await Promise.all([
          import('../ignite/mime-tool.js'),
          import('../ignite/tool-io.js'),
        ]);
        return runMimeTool(processToolIo(args));
      },
      isPassThrough: isIgniteRun,
    },
    ctx,
  );
  rawTool(
    ignite,
    {
      name: 'send',
      description: 'send a message: <type> <from> <to> [options] or <type> <from> <to> <payload> [priority]',
      run: async (args) => {
        const [{ runSendTool }, { processToolIo }] = await Promise.all([
          import('../ignite/send-tool.js'),
          import('../ignite/tool-io.js'),
        ]);
        return runSendTool(processToolIo(args));
      },
      isPassThrough: isIgniteRun,
    },
    ctx,
  );
  ignite
    .command('monitor')
    .description('run the queue monitor in the foreground (SIGTERM/SIGINT stop it, SIGHUP reloads settings)')
    .option('-s, --session <id>', 'IGNITE session name (env IGNITE_SESSION)')
    .option(
      '-w, --workspace <dir>',
      'workspace (env IGNITE_WORKSPACE / WORKSPACE_DIR, else the current directory)',
    )
    .option(
      '-i, --interval <seconds>',
      'rescan interval (env QUEUE_POLL_INTERVAL, system.yaml queue.poll_interval; default 10)',
    )
    .option(
      '--backend <name>',
      'run every agent on this backend (e.g. scripted); default: selection rules per agent',
    )
    .action(async (flags: { session?: string; workspace?: string; interval?: string; backend?: string }) => {
      const { runMonitor } = await import('../ignite/monitor-command.js');
      await runMonitor(ctx, flags);
    });
  ignite
    .command('init')
    .description(
      'create <dir>/.ignite/: queues, state, system.yaml, send/mime wrapper scripts, role instructions',
    )
    .argument('[dir]', 'workspace', '.')
    .option('--workers <n>', 'ignitian_N queues to create', parseNonNegativeInt('--workers'), DEFAULT_WORKERS)
    .action(async (dir: string, flags: { workers: number }) => {
      const [{ initWorkspace }, { resolve }] = await Promise.all([
        import('../ignite/workspace-init.js'),
        import('node:path'),
      ]);
      const result = await initWorkspace(resolve(dir), flags.workers);
      ctx.stdout.write(
        `initialised ${result.runtimeDir}\n  send tool: ${result.sendWrapper}\n  mime tool: ${result.mimeWrapper}\n`,
      );
    });
  ignite
    .command('start')
    .description('initialise if needed, record agent sessions, start the queue monitor in the background')
    .option('--workers <n>', 'number of ignitian workers', parseNonNegativeInt('--workers'), DEFAULT_WORKERS)
    .option('-w, --workspace <dir>', 'workspace (default: the current directory)')
    .option('--backend <name>', 'run every agent on this backend (e.g. scripted)')
    .action(async (flags: { workers: number; workspace?: string; backend?: string }) => {
      const { resolve } = await import('node:path');
      const workspace = resolve(flags.workspace ?? ctx.env['IGNITE_WORKSPACE'] ?? process.cwd());
      const { initWorkspace } = await import('../ignite/workspace-init.js');
      await initWorkspace(workspace, flags.workers);
      const { paths } = await locate(ctx, { workspace });
      const { startOrganisation } = await import('../ignite/org-commands.js');
      const pid = await startOrganisation(ctx, paths, workspace, {
        workers: flags.workers,
        ...(flags.backend !== undefined && { backend: flags.backend }),
      });
      ctx.stdout.write(
        `IGNITE organisation running: queue monitor pid ${pid}, ${flags.workers} worker(s); logs in ${paths.logs}\n`,
      );
    });
  ignite
    .command('plan')
    .description('send a goal to the leader (user_goal, priority high)')
    .argument('<goal>', 'the goal')
    .option('-c, --context <text>', 'context for the goal', '')
    .option('-w, --workspace <dir>', 'workspace')
    .action(async (goal: string, flags: WorkspaceFlags & { context: string }) => {
      const { paths } = await locate(ctx, flags);
      const { writePlan } = await import('../ignite/producers.js');
      ctx.stdout.write(`✓ ${await writePlan(paths, goal, flags.context)}\n`);
    });
  ignite
    .command('notify')
    .description('send a notification to an agent')
    .argument('<target>', 'agent name (ignitian-N is accepted)')
    .argument('<message>', 'the text')
    .option('-w, --workspace <dir>', 'workspace')
    .action(async (target: string, message: string, flags: WorkspaceFlags) => {
      const { paths } = await locate(ctx, flags);
      const { writeNotification } = await import('../ignite/producers.js');
      ctx.stdout.write(`✓ ${await writeNotification(paths, target, message)}\n`);
    });
  ignite
    .command('work-on')
    .description('hand a GitHub issue to the leader (github_task, priority high)')
    .argument('<issue>', 'issue number or URL')
    .option('-r, --repo <owner/repo>', 'repository (needed with a bare number)')
    .option('-w, --workspace <dir>', 'workspace')
    .action(async (issue: string, flags: WorkspaceFlags & { repo?: string }) => {
      const { paths } = await locate(ctx, flags);
      const { writeWorkOn } = await import('../ignite/producers.js');
      ctx.stdout.write(`✓ ${await writeWorkOn(paths, issue, flags.repo)}\n`);
    });
  ignite
    .command('status')
    .description('show the monitor, queue counts, dead letters and the latest progress (--watch refreshes)')
    .option('-w, --workspace <dir>', 'workspace')
    .option('--json', 'print one JSON object')
    .option('--watch <seconds>', 'refresh every N seconds until Ctrl-C')
    .action(async (flags: WorkspaceFlags & { json?: boolean; watch?: string }) => {
      const { workspace, paths } = await locate(ctx, flags);
      const { printStatus } = await import('../ignite/org-commands.js');
      if (flags.watch === undefined) return printStatus(ctx, paths, workspace, flags.json === true);
      const everyMs = Number(flags.watch) * 1000;
      if (!(everyMs > 0))
        throw new MusubiError('USAGE_INVALID', '--watch needs a positive number of seconds');
      const controller = new AbortController();
      process.once('SIGINT', () => controller.abort());
      const { setTimeout: sleep } = await import('node:timers/promises');
      while (!controller.signal.aborted) {
        if (flags.json !== true) ctx.stdout.write('\x1b[2J\x1b[H');
        await printStatus(ctx, paths, workspace, flags.json === true);
        await sleep(everyMs, undefined, { signal: controller.signal }).catch(() => undefined);
      }
    });
  ignite
    .command('stop')
    .description('stop the queue monitor (SIGTERM; running turns finish first)')
    .option('-w, --workspace <dir>', 'workspace')
    .action(async (flags: WorkspaceFlags) => {
      const { paths } = await locate(ctx, flags);
      const { stopOrganisation } = await import('../ignite/org-commands.js');
      const pid = await stopOrganisation(paths, STOP_TIMEOUT_MS);
      ctx.stdout.write(pid === null ? 'no queue monitor running\n' : `queue monitor ${pid} stopped\n`);
    });
}
