import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { AgentBackend, AgentRunner } from '../agents/agent-runner.js';
import { DEFAULT_STORE_URL, type Config } from '../core/config.schema.js';
import { MusubiError } from '../core/errors.js';
import { createIdGenerator } from '../core/ids.js';
import { Git } from '../runs/git.js';
import { executeRun, type RunProgress, type RunResult } from '../runs/run-engine.js';
import { AgentDirectory } from '../bus/agent-directory.js';
import { memberName, RunMembers, type RunRole } from '../runs/run-members.js';
import { RunOwners } from '../runs/run-owner.js';
import { newRunRecord, RunLedger, type RunRecord } from '../runs/run-record.js';
import { repoFolderOf } from '../runs/repo-folder.js';
import { RunWorktrees } from '../runs/worktrees.js';
import { ThreePhaseTeam } from '../teams/three-phase/three-phase-team.js';
import { createHubRunners } from './hub-runners.js';
import { openHub, type OpenHubOptions } from './hub.js';
import type { Bus } from '../bus/bus.types.js';
import type { AskHuman } from '../runs/turn-escalations.js';

/** What `musubi run` was asked. */
export interface RunRequest {
  readonly goal: string;
  /** Any folder inside the repository. */
  readonly repo: string;
  /** `three-phase`, or the id of a `teams.<id>` entry of musubi.yaml. */
  readonly team?: string | undefined;
  /** A backend (`claude`, `scripted`, …) or a configured agent (`agents.<name>`). */
  readonly agent?: string | undefined;
  readonly workers?: number | undefined;
  readonly test?: string | undefined;
  readonly budgetUsd?: number | undefined;
  readonly budgetTokens?: number;
  readonly keepWorktrees?: boolean;
}

/** What running a run needs besides a bus: config, agents, progress, the stop signal, limits. */
export interface RunExecutionOptions extends Omit<OpenHubOptions, 'cwd' | 'ids'> {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly installed: ReadonlySet<AgentBackend>;
  readonly onProgress: (progress: RunProgress) => void;
  readonly signal: AbortSignal;
  readonly apply?: boolean;
  /** Worker turn timeout. */
  readonly turnTimeoutMs?: number;
  /** How long a silent turn may go before it counts as stalled. */
  readonly stallMs?: number;
  /** Called once the run's record is in the ledger (a new run) or read back (a resumed one). */
  readonly onRecord?: (record: RunRecord) => void;
  /** The terminal's answer to a turn the bus gave up on (see RunEngineDeps.askHuman). */
  readonly askHuman?: AskHuman;
}

const DEFAULT_WORKERS = 2;

/** Where the repository at `dir` is, its HEAD and git directory; RUN_NOT_A_REPOSITORY with what to do. */
export async function repository(
  git: Git,
  dir: string,
): Promise<{ top: string; head: string; gitDir: string }> {
  const top = await git.topLevel(dir);
  if (top === undefined) {
    throw new MusubiError(
      'RUN_NOT_A_REPOSITORY',
      `${dir} is not in a git repository; musubi run works on a branch of one. Start one with: git init && git add -A && git commit -m "initial"`,
      { details: { dir } },
    );
  }
  const head = await git.commitOf(top, 'HEAD');
  if (head === undefined) {
    throw new MusubiError(
      'RUN_NOT_A_REPOSITORY',
      `${top} has no commit yet; musubi run starts from HEAD. Commit first: git add -A && git commit -m "initial"`,
      { details: { dir: top } },
    );
  }
  return { top, head, gitDir: await git.commonDir(top) };
}

/**
 * The store URL of the runs of the repository whose top is `top`: the configured one, or — when
 * musubi.yaml, `--store` and MUSUBI_STORE leave it at the default — the repository's own store
 * `<top>/.musubi/bus.db`, the one `musubi up` and `musubi dashboard` open anywhere in the repository.
 */
export function runStoreOf(config: Config, top: string): string {
  return config.store === DEFAULT_STORE_URL ? `sqlite:${join(repoFolderOf(top), 'bus.db')}` : config.store;
}

/**
 * Where a run's hub lives: the repository, its common git directory and the hub options over the run
 * store. The hub works at the repository's top, where the default store resolves to the repository's
 * own (see `parseStoreUrl`), whichever folder of it the run was started in.
 */
export async function runHubOptions(
  o: Pick<RunExecutionOptions, 'config' | 'env' | 'logger' | 'clock'>,
  repo: string,
): Promise<{ readonly gitDir: string; readonly hub: OpenHubOptions }> {
  const { gitDir, top } = await repository(new Git(o.env), repo);
  return {
    gitDir,
    hub: { config: o.config, cwd: top, logger: o.logger, clock: o.clock, ids: createIdGenerator(o.clock) },
  };
}

function newRunId(now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

/** The runners of a run: the manager, worker n and the resolver, by `--agent` or `teams.<id>.agents`. */
function runnersOf(
  o: RunExecutionOptions,
  bus: Parameters<typeof createHubRunners>[0]['bus'],
  record: RunRecord,
) {
  const teamEntry = Object.hasOwn(o.config.teams, record.team) ? o.config.teams[record.team] : undefined;
  const agent = record.agent;
  const isConfigured = agent !== null && Object.hasOwn(o.config.agents, agent);
  const runners = createHubRunners({
    config: o.config,
    env: o.env,
    installed: o.installed,
    ...(bus !== undefined && { bus }),
    recordTurns: { clock: o.clock, ids: createIdGenerator(o.clock), logger: o.logger },
    ...(agent !== null && !isConfigured && { flags: { backend: agent } }),
  });
  const agents = agent !== null && isConfigured ? [agent] : (teamEntry?.agents ?? []);
  const byName = (name: string | undefined): AgentRunner =>
    name === undefined ? runners.runnerOf(runners.planOf(undefined)) : runners.runnerFor(name);
  const fallback = agents.length === 0 ? byName(undefined) : undefined;
  const at = (i: number): AgentRunner => fallback ?? byName(agents[i % agents.length]);
  /** The model member `i`'s turns run on (undefined: the CLI's own default). */
  const modelAt = (i: number): string | undefined =>
    runners.planOf(agents.length === 0 ? undefined : agents[i % agents.length]).model;
  return {
    manager: at(0),
    worker: (n: number) => (agents.length > 1 ? at(n) : at(0)),
    modelOf: (n: number) => (agents.length > 1 ? modelAt(n) : modelAt(0)),
    backend: (fallback ?? at(0)).backend,
    secretMask: runners.secretMask,
  };
}

/**
 * The run's members in the agent directory (manager, worker 1..n, resolver) for as long as `use`
 * runs, each runner reporting its turns there; they leave the directory when `use` settles.
 */
async function withMembers<T>(
  o: RunExecutionOptions,
  bus: Bus,
  record: RunRecord,
  runners: ReturnType<typeof runnersOf>,
  use: (members: {
    manager: AgentRunner;
    worker: (n: number) => AgentRunner;
    resolver: AgentRunner;
  }) => Promise<T>,
): Promise<T> {
  const members = new RunMembers({
    directory: new AgentDirectory({ bus, clock: o.clock }),
    runId: record.id,
    team: record.team,
    logger: o.logger,
  });
  const join = (role: RunRole, runner: AgentRunner, n?: number): Promise<AgentRunner> => {
    const model = runners.modelOf(n ?? 0);
    return members.join({
      name: memberName(record.id, role, n),
      role,
      runner,
      ...(model !== undefined && { model }),
    });
  };
  try {
    const workerNumbers = Array.from({ length: record.workers }, (_, i) => i + 1);
    const [manager, resolver, ...workers] = await Promise.all([
      join('manager', runners.manager),
      join('resolver', runners.manager),
      ...workerNumbers.map((n) => join('worker', runners.worker(n), n)),
    ]);
    if (manager === undefined || resolver === undefined) throw new Error('the run has no manager');
    // A fix round's worker numbers stay within the run's workers; any other number reports as worker 1.
    const worker = (n: number): AgentRunner => workers[n - 1] ?? workers[0] ?? runners.worker(n);
    return await use({ manager, worker, resolver });
  } finally {
    await members.leave();
  }
}

/**
 * Runs `record` to its end on `bus` (whose KV holds the run ledger): a new run is recorded first, a
 * resumed one must be there. The worktrees live under `gitDir`. The run is claimed first (`RunOwners`):
 * RUN_ACTIVE, before anything else happens, when another live process runs it; the claim is renewed
 * while it runs (a run taken over by another process stops here) and released at the end.
 */
export async function executeOnBus(
  o: RunExecutionOptions,
  record: RunRecord,
  isNew: boolean,
  bus: Bus,
  gitDir: string,
): Promise<RunResult> {
  const git = new Git(o.env);
  const ledger = new RunLedger(bus.kv);
  // One owner per run: a second resumer is refused here, before any turn, worktree or record write.
  const claim = await new RunOwners({ kv: bus.kv, clock: o.clock }).claim(record.id);
  const stop = new AbortController();
  const onStop = (): void => stop.abort(o.signal.reason);
  const onLost = (): void => {
    o.logger.error({ runId: record.id }, 'another process took this run over; stopping here');
    stop.abort(claim.lost.reason);
  };
  if (o.signal.aborted) stop.abort(o.signal.reason);
  o.signal.addEventListener('abort', onStop, { once: true });
  claim.lost.addEventListener('abort', onLost, { once: true });
  try {
    if (isNew) await ledger.create(record);
    else await ledger.get(record.id);
    o.onRecord?.(record);
    return await executeOwned({ ...o, signal: stop.signal }, record, { bus, gitDir, git, ledger });
  } finally {
    o.signal.removeEventListener('abort', onStop);
    claim.lost.removeEventListener('abort', onLost);
    await claim.release();
  }
}

/** Runs `record` once this process owns it (see {@link executeOnBus}). */
function executeOwned(
  o: RunExecutionOptions,
  record: RunRecord,
  where: { readonly bus: Bus; readonly gitDir: string; readonly git: Git; readonly ledger: RunLedger },
): Promise<RunResult> {
  const { bus, gitDir, git, ledger } = where;
  const runners = runnersOf(o, bus, record);
  const testEnv = Object.fromEntries(
    Object.entries(o.env).filter((e): e is [string, string] => e[1] !== undefined),
  );
  return withMembers(o, bus, record, runners, (members) =>
    executeRun(
      {
        git,
        ledger,
        worktrees: new RunWorktrees(git, record.repo, gitDir, record.id),
        bus,
        clock: o.clock,
        logger: o.logger,
        managerRunner: members.manager,
        workerRunner: members.worker,
        resolverRunner: members.resolver,
        team: ({ manager, dispatcher }) =>
          new ThreePhaseTeam({ manager, dispatcher, workerCount: record.workers, logger: o.logger }),
        testEnv,
        secretMask: runners.secretMask,
        onProgress: o.onProgress,
        signal: o.signal,
        ...(o.apply !== undefined && { apply: o.apply }),
        ...(o.turnTimeoutMs !== undefined && { turnTimeoutMs: o.turnTimeoutMs }),
        ...(o.stallMs !== undefined && { stallMs: o.stallMs }),
        ...(o.askHuman !== undefined && { askHuman: o.askHuman }),
      },
      record,
    ),
  );
}

/**
 * A new run's first record: checks the repository (RUN_NOT_A_REPOSITORY), the team (USAGE_INVALID for
 * one `musubi run` cannot drive) and the agents (AGENT_BACKEND_UNKNOWN) before anything is recorded.
 */
export async function prepareRun(o: RunExecutionOptions, request: RunRequest): Promise<RunRecord> {
  const git = new Git(o.env);
  const { top, head } = await repository(git, request.repo);
  const team = request.team ?? 'three-phase';
  const teamEntry = Object.hasOwn(o.config.teams, team) ? o.config.teams[team] : undefined;
  const pattern = teamEntry?.pattern ?? team;
  if (pattern !== 'three-phase') {
    const what = teamEntry === undefined ? `the team '${team}'` : `team '${team}' (pattern ${pattern})`;
    throw new MusubiError(
      'USAGE_INVALID',
      `musubi run cannot drive ${what} yet; it runs the three-phase pattern (--team three-phase, or a teams.<id> entry with pattern: three-phase)`,
    );
  }
  const now = o.clock.now();
  const record = newRunRecord(
    {
      id: newRunId(now),
      goal: request.goal,
      repo: top,
      baseCommit: head,
      team,
      agent: request.agent ?? null,
      workers: request.workers ?? DEFAULT_WORKERS,
      test: request.test ?? null,
      budget: {
        ...(request.budgetUsd !== undefined && { usd: request.budgetUsd }),
        ...(request.budgetTokens !== undefined && { tokens: request.budgetTokens }),
      },
      keepWorktrees: request.keepWorktrees === true,
    },
    now,
  );
  runnersOf(o, undefined, record); // refuses an unknown backend before anything is recorded
  return record;
}

/** Opens the run store of the repository at `repo` and calls `use` with its ledger. */
export async function withRunLedger<T>(
  o: Pick<RunExecutionOptions, 'config' | 'env' | 'logger' | 'clock'>,
  repo: string,
  use: (ledger: RunLedger) => Promise<T>,
): Promise<T> {
  const hub = await openHub((await runHubOptions(o, repo)).hub);
  try {
    return await use(new RunLedger(hub.bus.kv));
  } finally {
    await hub.close();
  }
}
