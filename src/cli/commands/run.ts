import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { MusubiError } from '../../core/errors.js';
import type { RunRequest } from '../../hub/start-run.js';
import type { RunProgress } from '../../runs/run-engine.js';
import type { RunRecord } from '../../runs/run-record.js';
import type { CliContext } from '../cli-context.js';
import { parseNonNegativeInt } from '../option-parsers.js';
import { stopSignals } from '../stop-signals.js';

/** The flags of `musubi run`: the request's own fields, plus how to run and show it. */
interface RunFlags extends Partial<Omit<RunRequest, 'goal'>> {
  readonly json?: boolean;
  readonly goalFile?: string;
  readonly resume?: string;
  readonly apply?: boolean;
  readonly stallSeconds?: number;
  readonly dashboard?: boolean;
  readonly dashboardPort?: number;
  readonly turnTimeout?: number;
  readonly onDeadLetter?: 'ask' | 'skip' | 'abort';
}

function positiveInt(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1 || n > 64)
      throw new MusubiError('USAGE_INVALID', `${flag}: an integer from 1 to 64, not '${value}'`);
    return n;
  };
}

function positiveNumber(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0)
      throw new MusubiError('USAGE_INVALID', `${flag}: a positive number, not '${value}'`);
    return n;
  };
}

async function readGoal(
  ctx: CliContext,
  goal: string | undefined,
  goalFile: string | undefined,
): Promise<string> {
  if (goal !== undefined && goalFile !== undefined)
    throw new MusubiError('USAGE_INVALID', 'give the goal or --goal-file, not both');
  let text: string;
  if (goalFile !== undefined)
    text = await readFile(goalFile, 'utf8').catch((err: unknown) => {
      throw new MusubiError(
        'USAGE_INVALID',
        `--goal-file ${goalFile}: ${err instanceof Error ? err.message : String(err)}`,
      );
    });
  else if (goal === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of ctx.stdin)
      chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    text = Buffer.concat(chunks).toString('utf8');
  } else if (goal !== undefined) text = goal;
  else
    throw new MusubiError(
      'USAGE_INVALID',
      'musubi run needs a goal: musubi run "<goal>" (or --goal-file <file>, or - for stdin)',
    );
  if (text.trim() === '') throw new MusubiError('USAGE_INVALID', 'the goal is empty');
  return text.trim();
}

async function context(ctx: CliContext) {
  const [config, { createSystemClock }] = await Promise.all([
    ctx.loadConfig(),
    import('../../core/clock.js'),
  ]);
  // The run's own lines are the progress view; log lines only for warnings unless a level was asked for.
  const isLevelAsked =
    ctx.globalOptions().logLevel !== undefined || ctx.env['MUSUBI_LOG_LEVEL'] !== undefined;
  const logConfig = isLevelAsked ? config : { ...config, log: { ...config.log, level: 'warn' as const } };
  return { config, clock: createSystemClock(), logger: ctx.logger(logConfig) };
}

/** The agent CLIs on PATH: only `musubi run` needs them (`runs` reads records). */
async function installed(ctx: CliContext) {
  const { installedBackends } = await import('../../agents/selection/installed-backends.js');
  return installedBackends(ctx.env);
}

async function report(ctx: CliContext, record: RunRecord, json: boolean): Promise<void> {
  const { Git } = await import('../../runs/git.js');
  const { runJson, summaryLines } = await import('../run/run-view.js');
  const git = new Git(ctx.env);
  const head =
    record.headCommit ??
    (await git.commitOf(record.repo, `refs/heads/${record.branch}`)) ??
    record.baseCommit;
  const files = await git.changedFiles(record.repo, record.baseCommit, head).catch(() => []);
  if (json) {
    ctx.stdout.write(`${JSON.stringify(runJson({ ...record, headCommit: head }, files))}\n`);
    return;
  }
  const stat = await git.out(record.repo, ['diff', '--stat', record.baseCommit, head]).catch(() => '');
  ctx.stdout.write(`${summaryLines(record, stat).join('\n')}\n`);
}

/** The request fields of the flags (commander leaves absent options out). */
function requestOf(flags: RunFlags): Omit<RunRequest, 'goal' | 'repo'> {
  const { repo: _repo, json: _json, goalFile: _goalFile, resume: _resume, apply: _apply, ...rest } = flags;
  const {
    stallSeconds: _stall,
    dashboard: _dashboard,
    dashboardPort: _port,
    turnTimeout: _timeout,
    onDeadLetter: _onDeadLetter,
    ...request
  } = rest;
  return request;
}

async function run(ctx: CliContext, goalArg: string | undefined, flags: RunFlags): Promise<void> {
  const repo = resolve(flags.repo ?? process.cwd());
  const base = await context(ctx);
  const [{ startRun, resumeRun }, { createRunView, exitCodeOf }] = await Promise.all([
    import('../../hub/start-run.js'),
    import('../run/run-view.js'),
  ]);
  const json = flags.json === true;
  const out = json ? ctx.stderr : ctx.stdout;
  const isTty = 'isTTY' in out && out.isTTY === true && ctx.env['TERM'] !== 'dumb';
  const ttyColumns = 'columns' in out && typeof out.columns === 'number' ? out.columns : 0;
  const columns = ttyColumns > 0 ? ttyColumns : Number(ctx.env['COLUMNS'] ?? '') || 100;
  const view = createRunView({ out, isTty, columns });
  const signals = stopSignals();
  const stdin = ctx.stdin as NodeJS.ReadableStream & { isTTY?: boolean };
  const { answerAlways, askOnTerminal } = await import('../run/escalation-prompt.js');
  const onDeadLetter = flags.onDeadLetter ?? 'ask';
  const options = {
    ...base,
    installed: await installed(ctx),
    env: ctx.env,
    signal: signals.signal,
    onProgress: (p: RunProgress) => view.update(p),
    // A person at a terminal answers a turn the bus gave up on there (the page and `runs answer` too).
    ...(onDeadLetter !== 'ask'
      ? { askHuman: answerAlways(onDeadLetter) }
      : stdin.isTTY === true && isTty && { askHuman: askOnTerminal(stdin, out) }),
    ...(flags.apply !== undefined && { apply: flags.apply }),
    ...(flags.stallSeconds !== undefined && { stallMs: flags.stallSeconds * 1000 }),
    ...((flags.dashboard === true || flags.dashboardPort !== undefined) && {
      dashboardPort: flags.dashboardPort ?? 0,
      onDashboard: (url: string) => out.write(`dashboard: ${url}\n`),
    }),
    ...(flags.turnTimeout !== undefined && { turnTimeoutMs: flags.turnTimeout * 1000 }),
  };
  try {
    const result =
      flags.resume !== undefined
        ? await resumeRun(options, repo, flags.resume, {
            ...(flags.budgetUsd !== undefined && { usd: flags.budgetUsd }),
            ...(flags.budgetTokens !== undefined && { tokens: flags.budgetTokens }),
          })
        : await startRun(options, {
            ...requestOf(flags),
            goal: await readGoal(ctx, goalArg, flags.goalFile),
            repo,
          });
    view.close();
    await report(ctx, result.record, json);
    if (result.applied !== undefined) {
      out.write(
        result.applied.ok
          ? `applied: merged ${result.record.branch} into your current branch\n`
          : `not applied: ${result.applied.reason}\n`,
      );
    }
    ctx.setExitCode(exitCodeOf(result.record));
  } finally {
    signals.dispose();
  }
}

async function answer(
  ctx: CliContext,
  id: string,
  choice: string,
  flags: { repo?: string; turn?: string },
): Promise<void> {
  const repo = resolve(flags.repo ?? process.cwd());
  const base = await context(ctx);
  const { answerRun } = await import('../../hub/start-run.js');
  const sent = await answerRun({ ...base, env: ctx.env }, repo, id, choice, flags.turn);
  ctx.stdout.write(`sent ${sent.choice} for ${sent.turn} to run ${id}\n`);
}

async function runs(
  ctx: CliContext,
  id: string | undefined,
  flags: { repo?: string; json?: boolean },
): Promise<void> {
  const repo = resolve(flags.repo ?? process.cwd());
  const base = await context(ctx);
  const [{ withRunLedger }, { listLine }] = await Promise.all([
    import('../../hub/start-run.js'),
    import('../run/run-view.js'),
  ]);
  const options = { ...base, env: ctx.env };
  if (id !== undefined) {
    const record = await withRunLedger(options, repo, (ledger) => ledger.get(id));
    await report(ctx, record, flags.json === true);
    return;
  }
  const list = await withRunLedger(options, repo, (ledger) => ledger.list());
  if (flags.json === true) {
    ctx.stdout.write(
      `${JSON.stringify(list.map((r) => ({ runId: r.id, status: r.status, goal: r.goal, branch: r.branch, createdAt: r.createdAt })))}\n`,
    );
  } else if (list.length === 0)
    ctx.stdout.write('no runs in this repository yet; start one with musubi run "<goal>"\n');
  else ctx.stdout.write(`${list.map(listLine).join('\n')}\n`);
}

/** Registers `musubi run` and `musubi runs [show <id>]` (docs/run.md). */
export function registerRunCommands(program: Command, ctx: CliContext): void {
  program
    .command('run [goal]')
    .description(
      'run a team of agents on a goal in your git repository: each worker in its own worktree, merged onto musubi/<run-id>',
    )
    .option('--repo <dir>', 'the repository (default: the current directory)')
    .option('--goal-file <file>', 'read the goal from a file (or give - as the goal to read stdin)')
    .option('--team <team>', 'three-phase, or a teams.<id> of musubi.yaml (default three-phase)')
    .option(
      '--agent <agent>',
      'a backend (claude, codex, gemini, copilot, opencode, scripted) or agents.<name> (default: the first installed CLI, else scripted)',
    )
    .option('--workers <n>', 'parallel workers (default 2)', positiveInt('--workers'))
    .option(
      '--test <command>',
      'run this command in the merged tree at the end (no shell); a failure gets one more implement round',
    )
    .option(
      '--budget-usd <x>',
      'stop dispatching once the run has cost this much',
      positiveNumber('--budget-usd'),
    )
    .option(
      '--budget-tokens <n>',
      'stop dispatching once the run has used this many tokens',
      positiveInt('--budget-tokens'),
    )
    .option('--json', 'print one JSON object at the end (progress goes to stderr)')
    .option('--keep-worktrees', 'leave the worktrees and worker branches in place')
    .option('--apply', 'merge the result into your current branch at the end (only when your tree is clean)')
    .option(
      '--stall-seconds <s>',
      'a turn silent this long is stopped and run again (default 300)',
      positiveNumber('--stall-seconds'),
    )
    .option(
      '--turn-timeout <s>',
      'the longest one turn may take (default 1200)',
      positiveNumber('--turn-timeout'),
    )
    .option('--dashboard', 'serve the dashboard on the run’s store while it runs (a free loopback port)')
    .option('--dashboard-port <port>', 'the dashboard on this port', parseNonNegativeInt('--dashboard-port'))
    .option('--resume <run-id>', 'continue a stopped or killed run from its last finished step')
    .addOption(
      new Option(
        '--on-dead-letter <answer>',
        'a turn the bus gave up on (after its last attempt): ask (the terminal, the dashboard inbox, musubi runs answer), skip it or abort the run',
      ).choices(['ask', 'skip', 'abort']),
    )
    .action((goal: string | undefined, flags: RunFlags) => run(ctx, goal, flags));
  const list = program
    .command('runs')
    .description('list the runs of this repository (musubi runs show <id> prints one again)')
    .option('--repo <dir>', 'the repository (default: the current directory)')
    .option('--json', 'print JSON')
    .action((flags: { repo?: string; json?: boolean }) => runs(ctx, undefined, flags));
  list
    .command('answer <run-id> <choice>')
    .description(
      'answer a run turn the bus gave up on (after its last attempt): retry it, skip it, or abort the run',
    )
    .option('--repo <dir>', 'the repository (default: the current directory)')
    .option('--turn <id>', 'the turn, when several wait (musubi runs answer prints them)')
    .action((id: string, choice: string, flags: { repo?: string; turn?: string }) =>
      answer(ctx, id, choice, { ...list.opts<{ repo?: string }>(), ...flags }),
    );
  list
    .command('show <run-id>')
    .description("print a run's summary again")
    .option('--repo <dir>', 'the repository (default: the current directory)')
    .option('--json', 'print the --json object of musubi run')
    // `runs` has the same options; commander gives them to the parent when written after `show`.
    .action((id: string, flags: { repo?: string; json?: boolean }) =>
      runs(ctx, id, { ...list.opts<{ repo?: string; json?: boolean }>(), ...flags }),
    );
}
