import type { Command } from 'commander';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentBackend, AgentRunner, AgentRunResult } from '../../agents/agent-runner.js';
import type { Config } from '../../core/config.schema.js';
import { MusubiError } from '../../core/errors.js';
import { claudeRootNotice } from '../../agents/claude/claude-backend.js';
import { turnFailureReason } from '../../agents/failure-reason.js';
import type { CliContext } from '../cli-context.js';
import type { ProbeDiagnosis } from '../agent/probe-diagnosis.js';

const DEFAULT_TIMEOUT_MS = 600_000;

interface RunFlags {
  readonly backend?: string;
  readonly agent?: string;
  readonly model?: string;
  readonly cwd?: string;
  readonly session?: string;
  readonly timeout?: string;
  readonly json?: boolean;
}

function parseTimeout(raw: string | undefined): number {
  if (raw === undefined) return DEFAULT_TIMEOUT_MS;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) {
    throw new MusubiError(
      'USAGE_INVALID',
      `--timeout must be a positive number of milliseconds, got '${raw}'`,
    );
  }
  return Number(raw);
}

async function readPrompt(ctx: CliContext, prompt: string): Promise<string> {
  if (prompt !== '-') return prompt;
  const chunks: Buffer[] = [];
  for await (const chunk of ctx.stdin)
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

function failure(result: AgentRunResult): MusubiError | undefined {
  if (result.timedOut)
    return new MusubiError(
      'AGENT_TIMEOUT',
      `agent turn on '${result.backend}' timed out after ${result.durationMs} ms`,
    );
  if (result.canceled)
    return new MusubiError('AGENT_CANCELED', `agent turn on '${result.backend}' was cancelled`);
  if (!result.isError) return undefined;
  const why = result.exitCode === 0 ? 'reported an error' : `exited with ${result.exitCode ?? result.signal}`;
  const reason = turnFailureReason({ ...result, text: '' });
  return new MusubiError(
    'AGENT_FAILED',
    `agent CLI '${result.backend}' ${why}${reason === '' ? '' : `: ${reason}`}`,
  );
}

const PROBE_TIMEOUT_MS = 90_000;
const PROBE_PROMPT =
  'This is a connectivity check from `musubi agent doctor --probe`. Reply with the single word: ready';

interface DoctorFlags {
  readonly json?: boolean;
  readonly probe?: boolean;
}

/** The runner of a turn of no agent on `backend`, from the one factory (config: `backends.<backend>`). */
async function backendRunner(
  config: Config,
  env: CliContext['env'],
  backend: AgentBackend,
): Promise<AgentRunner> {
  const { createHubRunners } = await import('../../hub/hub-runners.js');
  const runners = createHubRunners({ config, env, installed: new Set(), flags: { backend } });
  return runners.runnerOf(runners.planOf(undefined));
}

async function doctor(ctx: CliContext, flags: DoctorFlags): Promise<void> {
  const [{ AGENT_BACKENDS }, { configSchema }] = await Promise.all([
    import('../../agents/agent-runner.js'),
    import('../../core/config.schema.js'),
  ]);
  // Only the binaries: musubi.yaml is not read, so a broken one does not hide what is installed.
  const defaults = configSchema.parse({});
  const rows = await Promise.all(
    AGENT_BACKENDS.map(async (backend) => ({
      backend,
      ...(await (await backendRunner(defaults, ctx.env, backend)).available()),
    })),
  );
  const probes =
    flags.probe === true
      ? await probeBackends(
          ctx,
          rows.filter((r) => r.ready).map((r) => r.backend),
        )
      : undefined;
  if (flags.json === true) {
    const report = rows.map((row) => ({
      ...row,
      ...(probes?.has(row.backend) && { probe: probes.get(row.backend) }),
    }));
    ctx.stdout.write(`${JSON.stringify(report)}\n`);
    return;
  }
  for (const row of rows) {
    const probe = probes?.get(row.backend);
    const state = !row.ready
      ? 'not ready'
      : row.backend === 'scripted'
        ? 'ready'
        : probe === undefined
          ? 'found'
          : probe.problem === 'none'
            ? 'ready'
            : probe.problem;
    const detail = row.ready
      ? [row.version, row.path].filter((s) => s !== undefined).join('  ')
      : row.reasons.join('; ');
    ctx.stdout.write(`${row.backend.padEnd(9)} ${state.padEnd(10)} ${detail}\n`);
    const notice =
      row.backend === 'claude' && row.ready
        ? claudeRootNotice(process.getuid?.() === 0, ctx.env, undefined)
        : undefined;
    if (notice !== undefined) ctx.stdout.write(`          note: ${notice}\n`);
    if (probe !== undefined && probe.problem !== 'none') {
      ctx.stdout.write(`          ${probe.detail.split('\n').join('\n          ')}\n`);
      if (probe.fix !== undefined) ctx.stdout.write(`          fix: ${probe.fix}\n`);
    }
  }
  if (probes === undefined) {
    ctx.stdout.write(
      '(only the binaries were checked; `musubi agent doctor --probe` runs one real turn per backend)\n',
    );
  }
}

async function probeBackends(
  ctx: CliContext,
  backends: readonly AgentBackend[],
): Promise<Map<AgentBackend, ProbeDiagnosis>> {
  const [config, { diagnoseProbe }] = await Promise.all([
    ctx.loadConfig(),
    import('../agent/probe-diagnosis.js'),
  ]);
  const dir = await mkdtemp(join(tmpdir(), 'musubi-probe-'));
  try {
    const entries = await Promise.all(
      backends.map(async (backend) => {
        const runner = await backendRunner(config, ctx.env, backend);
        const result = await runner.run({ prompt: PROBE_PROMPT, cwd: dir, timeoutMs: PROBE_TIMEOUT_MS });
        return [backend, diagnoseProbe(backend, result, PROBE_TIMEOUT_MS)] as const;
      }),
    );
    return new Map(entries);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function run(ctx: CliContext, promptArg: string, flags: RunFlags): Promise<void> {
  const timeoutMs = parseTimeout(flags.timeout);
  const [config, { openRunners }, { installedBackends }, { createSystemClock }, { createIdGenerator }] =
    await Promise.all([
      ctx.loadConfig(),
      import('../../hub/open-runners.js'),
      import('../../agents/selection/installed-backends.js'),
      import('../../core/clock.js'),
      import('../../core/ids.js'),
    ]);
  const clock = createSystemClock();
  await using turn = await openRunners({
    config,
    cwd: process.cwd(),
    env: ctx.env,
    logger: ctx.logger(config),
    clock,
    ids: createIdGenerator(clock),
    installed: flags.backend === undefined ? await installedBackends(ctx.env) : new Set(),
    flags: flagsOf(flags),
    agents: [flags.agent],
  });
  const plan = turn.runners.planOf(flags.agent);
  const prompt = await readPrompt(ctx, promptArg);
  const runner = turn.runners.runnerOf(plan);
  const controller = new AbortController();
  const onSigint = (): void => controller.abort(new MusubiError('AGENT_CANCELED', 'interrupted'));
  process.once('SIGINT', onSigint);
  let result: AgentRunResult;
  try {
    result = await runner.run({
      prompt,
      cwd: flags.cwd ?? plan.cwd ?? process.cwd(),
      timeoutMs,
      signal: controller.signal,
      ...(flags.session !== undefined && { sessionId: flags.session }),
    });
  } finally {
    process.off('SIGINT', onSigint);
  }
  if (flags.json === true) {
    const { backend, text, exitCode, sessionId, usage, durationMs, isError, timedOut, canceled } = result;
    ctx.stdout.write(
      `${JSON.stringify({ backend, text, exitCode, sessionId, usage, durationMs, isError, timedOut, canceled })}\n`,
    );
  } else if (result.text !== '') ctx.stdout.write(`${result.text}\n`);
  const err = failure(result);
  if (err !== undefined) throw err;
}

function flagsOf(flags: RunFlags): { backend?: string; model?: string } {
  return {
    ...(flags.backend !== undefined && { backend: flags.backend }),
    ...(flags.model !== undefined && { model: flags.model }),
  };
}

/** Registers `musubi agent doctor` and `musubi agent run`: check the agent CLIs and run one turn. */
export function registerAgentCommands(program: Command, ctx: CliContext): void {
  const agent = program.command('agent').description('check agent CLIs and run single agent turns');
  agent
    .command('doctor')
    .description(
      'list every agent backend: binary found and its version; --probe also runs one real turn each',
    )
    .option('--json', 'print the report as JSON')
    .option(
      '--probe',
      'run one short real turn per installed backend and report auth, endpoint and permission problems',
    )
    .action((flags: DoctorFlags) => doctor(ctx, flags));
  agent
    .command('run')
    .description('run one agent turn and print the result ("-" reads the prompt from stdin)')
    .argument('<prompt>', 'the prompt')
    .option(
      '--backend <name>',
      'claude|codex|gemini|copilot|opencode|scripted (or claude-opus); default: selection rules',
    )
    .option('--agent <name>', 'take backend, model and settings from config agents.<name>')
    .option('--model <model>', 'model for this turn')
    .option('--cwd <dir>', 'working directory (default: the current one)')
    .option('--session <id>', 'resume this session')
    .option('--timeout <ms>', `stop the turn after this many milliseconds (default ${DEFAULT_TIMEOUT_MS})`)
    .option('--json', 'print text, exitCode, sessionId, usage and durationMs as JSON')
    .action((prompt: string, flags: RunFlags) => run(ctx, prompt, flags));
}
