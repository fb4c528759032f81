// `musubi run` orchestration overhead: executeRun in process with a zero-latency agent (each worker turn
// writes the one file its instruction names and returns), on a real git repository in a temp dir, against
// the bare git commands the same work needs, run the same way (execFile, no shell) in the same kind of
// repository in the same run: `git worktree add -b` per subtask, the file, `git add -A` + `git commit`,
// `git worktree remove --force`, then `git merge --no-ff` of every branch in an integration worktree. What
// musubi takes beyond that is its own cost: the extra git calls (pruning, leftover checks, rev-parse,
// branch deletion, the staged-changes check) and the run record written after every step.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentRunInput } from '../src/agents/agent-runner.js';
import { createBus } from '../src/bus/bus.js';
import { createSystemClock } from '../src/core/clock.js';
import { createIdGenerator } from '../src/core/ids.js';
import { createSilentLogger } from '../src/core/logger.js';
import { Git, type GitResult } from '../src/runs/git.js';
import { executeRun } from '../src/runs/run-engine.js';
import { newRunRecord, RunLedger, type RunRecord } from '../src/runs/run-record.js';
import { RunWorktrees } from '../src/runs/worktrees.js';
import { MemoryStore } from '../src/store/memory/memory-store.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { Store } from '../src/store/store.js';
import { ThreePhaseTeam } from '../src/teams/three-phase/three-phase-team.js';
import { FakeAgentRunner } from '../test/fakes/fake-agent-runner.js';
import { machineLine, percentile, printTable, writeResultsSection, type BenchRow } from './bench-kit.js';

const SUBTASKS = [4, 16] as const;
const REPS = 3;
/** Files in each benchmark repository besides README.md (every worktree checks them all out). */
const REPO_FILES = 20;
const clock = createSystemClock();
const logger = createSilentLogger();
const root = mkdtempSync(join(tmpdir(), 'musubi-run-bench-'));

/** Both sides run git with the same environment: musubi's own (LC_ALL=C, no pager, no prompt), no user config. */
const gitEnv: Record<string, string> = {
  ...Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined)),
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
  GIT_PAGER: 'cat',
  LC_ALL: 'C',
};

/** Time spent in git calls, by subcommand (`worktree add`, `commit`, …). */
class GitProfile {
  readonly calls = new Map<string, { count: number; ms: number }>();

  add(args: readonly string[], ms: number): void {
    let i = 0;
    while (args[i] === '-c') i += 2;
    const sub = args[i] ?? '?';
    const key = sub === 'worktree' ? `${sub} ${args[i + 1] ?? ''}` : sub;
    const entry = this.calls.get(key) ?? { count: 0, ms: 0 };
    entry.count++;
    entry.ms += ms;
    this.calls.set(key, entry);
  }

  get count(): number {
    return [...this.calls.values()].reduce((n, e) => n + e.count, 0);
  }

  get ms(): number {
    return [...this.calls.values()].reduce((n, e) => n + e.ms, 0);
  }

  merge(other: GitProfile): void {
    for (const [key, e] of other.calls) {
      const entry = this.calls.get(key) ?? { count: 0, ms: 0 };
      entry.count += e.count;
      entry.ms += e.ms;
      this.calls.set(key, entry);
    }
  }
}

/** musubi's Git, timing every call into a profile. */
class ProfiledGit extends Git {
  readonly profile = new GitProfile();

  override async run(cwd: string, args: readonly string[], stdin?: string): Promise<GitResult> {
    const started = performance.now();
    try {
      return await super.run(cwd, args, stdin);
    } finally {
      this.profile.add(args, performance.now() - started);
    }
  }
}

/** Bare git: execFile with an argument list, rejecting on a non-zero exit; timed into `profile`. */
function bareGit(profile: GitProfile) {
  return (cwd: string, ...args: string[]): Promise<string> => {
    const started = performance.now();
    return new Promise((resolve, reject) => {
      execFile('git', args, { cwd, env: gitEnv, encoding: 'utf8' }, (err, stdout, stderr) => {
        profile.add(args, performance.now() - started);
        if (err === null) resolve(stdout);
        else reject(new Error(`git ${args.join(' ')}: ${stderr.trim() || err.message}`));
      });
    });
  };
}

let repoNo = 0;

/** A fresh repository (README.md plus REPO_FILES small files, one commit, identity in its config). */
function makeRepo(): { dir: string; head: string } {
  const dir = join(root, `repo-${repoNo++}`);
  mkdirSync(join(dir, 'src'), { recursive: true });
  const git = (...args: string[]): string =>
    execFileSync('git', args, { cwd: dir, env: gitEnv, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'bench');
  git('config', 'user.email', 'bench@localhost');
  writeFileSync(join(dir, 'README.md'), 'hello\n');
  for (let i = 0; i < REPO_FILES; i++) {
    writeFileSync(join(dir, 'src', `file-${i}.ts`), `export const value${i} = ${i};\n`.repeat(20));
  }
  git('add', '-A');
  git('commit', '-q', '-m', 'init');
  return { dir, head: git('rev-parse', 'HEAD').trim() };
}

/** The files the run branch changed against the base: the check that both sides did the whole job. */
function changedFiles(dir: string, from: string, to: string): number {
  const out = execFileSync('git', ['diff', '--name-only', from, to], {
    cwd: dir,
    env: gitEnv,
    encoding: 'utf8',
  });
  return out.trim().split('\n').filter(Boolean).length;
}

/** CPU time of this process, and of its waited-for children (git) from /proc when there is one. */
function cpuMs(): { self: number; children: number } {
  const usage = process.cpuUsage();
  let children = Number.NaN;
  if (existsSync('/proc/self/stat')) {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 16 and 17 of proc(5) (cutime, cstime), here 0-based after the command name: 13 and 14.
    children = ((Number(fields[13]) + Number(fields[14])) * 1000) / 100; // clock ticks at USER_HZ 100
  }
  return { self: (usage.user + usage.system) / 1000, children };
}

interface Sample {
  readonly ms: number;
  readonly selfCpuMs: number;
  readonly gitCpuMs: number;
  readonly profile: GitProfile;
  /** Run record writes (`RunLedger.save`), musubi only. */
  readonly saves: Tally;
}

interface Tally {
  count: number;
  ms: number;
}

/** musubi's RunLedger, timing every save (the store write and the record's schema parse). */
class ProfiledLedger extends RunLedger {
  readonly saves: Tally = { count: 0, ms: 0 };

  override async save(record: RunRecord): Promise<void> {
    const started = performance.now();
    try {
      await super.save(record);
    } finally {
      this.saves.count++;
      this.saves.ms += performance.now() - started;
    }
  }
}

async function measured(
  work: () => Promise<void>,
  profile: GitProfile,
  saves: Tally = { count: 0, ms: 0 },
): Promise<Sample> {
  const cpu = cpuMs();
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  const after = cpuMs();
  return { ms, selfCpuMs: after.self - cpu.self, gitCpuMs: after.children - cpu.children, profile, saves };
}

/** The bare-git baseline of a run of `k` subtasks. */
async function bareRun(k: number): Promise<Sample> {
  const { dir, head } = makeRepo();
  const base = join(dir, '.git', 'bare');
  const integration = join(base, 'integration');
  const profile = new GitProfile();
  const git = bareGit(profile);
  const sample = await measured(async () => {
    await git(dir, 'worktree', 'add', '-q', '-b', 'bare/run', integration, 'HEAD');
    for (let j = 1; j <= k; j++) {
      const tree = join(base, `sub${j}`);
      await git(dir, 'worktree', 'add', '-q', '-b', `bare/sub${j}`, tree, 'HEAD');
      await writeFile(join(tree, `part-${j}.txt`), `part-${j}.txt\n`);
      await git(tree, 'add', '-A');
      await git(tree, 'commit', '-q', '-m', `sub${j}`);
      await git(dir, 'worktree', 'remove', '--force', tree); // as musubi: no `git status` child first
    }
    for (let j = 1; j <= k; j++) {
      await git(integration, 'merge', '--no-ff', '-q', '-m', `merge sub${j}`, `bare/sub${j}`);
    }
    await git(dir, 'worktree', 'remove', '--force', integration);
  }, profile);
  const files = changedFiles(dir, head, 'bare/run');
  if (files !== k) throw new Error(`bare git run of ${k} subtasks changed ${files} files`);
  rmSync(dir, { recursive: true, force: true });
  return sample;
}

function runRecord(id: string, dir: string, head: string, workers: number): RunRecord {
  const start = { id, goal: 'one file per subtask', repo: dir, baseCommit: head, team: 'three-phase' };
  return newRunRecord(
    { ...start, agent: null, workers, test: null, budget: {}, keepWorktrees: false },
    clock.now(),
  );
}

type StoreKind = 'sqlite' | 'memory';

/** One `executeRun` of `k` implement subtasks (empty docs and review phases) on a zero-latency agent. */
async function musubiRun(k: number, storeKind: StoreKind, workers: number): Promise<Sample> {
  const { dir, head } = makeRepo();
  const gitDir = join(dir, '.git');
  // Where `musubi run` keeps its store by default: the repository's <top>/.musubi/bus.db.
  mkdirSync(join(dir, '.musubi'), { recursive: true });
  const store: Store =
    storeKind === 'sqlite'
      ? SqliteStore.open({ path: join(dir, '.musubi', 'bus.db'), clock })
      : new MemoryStore({ clock });
  const bus = createBus({
    store,
    clock,
    ids: createIdGenerator(clock),
    logger,
    config: { leaseMs: 30_000, retry: { baseMs: 5_000, capMs: 300_000, maxAttempts: 3 } },
  });
  const ledger = new ProfiledLedger(bus.kv);
  const id = `bench${repoNo}`;
  await ledger.create(runRecord(id, dir, head, workers));
  const plan = JSON.stringify({
    phases: [
      {
        name: 'implement',
        subtasks: Array.from({ length: k }, (_, j) => ({ instruction: `make part-${j + 1}.txt` })),
      },
      { name: 'docs', subtasks: [] },
      { name: 'review', subtasks: [] },
    ],
  });
  const manager = new FakeAgentRunner(() => ({ text: plan }));
  const worker = new FakeAgentRunner(async (input: AgentRunInput) => {
    const file = /make (\S+)/.exec(input.prompt)?.[1];
    if (file !== undefined) await writeFile(join(input.cwd, file), `${file}\n`);
    return { text: 'done' };
  });
  const git = new ProfiledGit(gitEnv);
  try {
    const initial = await ledger.get(id);
    let status = '';
    const sample = await measured(
      async () => {
        const result = await executeRun(
          {
            git,
            ledger,
            worktrees: new RunWorktrees(git, dir, gitDir, id),
            bus,
            clock,
            logger,
            managerRunner: manager,
            workerRunner: () => worker,
            resolverRunner: manager,
            team: ({ manager: turn, dispatcher }) =>
              new ThreePhaseTeam({ manager: turn, dispatcher, workerCount: workers, logger }),
            testEnv: {},
            onProgress: () => undefined,
            signal: new AbortController().signal,
          },
          initial,
        );
        const { status: ended, reason } = result.record;
        status = reason === null ? ended : `${ended}: ${reason}`;
      },
      git.profile,
      ledger.saves,
    );
    if (status !== 'succeeded') throw new Error(`musubi run of ${k} subtasks ended ${status}`);
    const files = changedFiles(dir, head, `musubi/${id}`);
    if (files !== k) throw new Error(`musubi run of ${k} subtasks changed ${files} files`);
    return sample;
  } finally {
    await bus.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Variant {
  readonly name: string;
  readonly run: (k: number) => Promise<Sample>;
}

const BARE: Variant = { name: 'bare git (same operations)', run: bareRun };
const SQLITE: Variant = {
  name: 'musubi executeRun, SQLite store, 1 worker',
  run: (k) => musubiRun(k, 'sqlite', 1),
};
/**
 * With `--all`, also the memory store (what the SQLite writes cost) and 2 workers (musubi run's default;
 * two subtasks at once, so against the serial baseline); left out by default to keep the bench near a
 * minute on a slow machine.
 */
const ALL = process.argv.includes('--all');
/** Many workers at once (#34's bar: 16 subtasks on 8 workers still finish), against the serial baseline. */
const EIGHT: Variant = {
  name: 'musubi executeRun, SQLite store, 8 workers',
  run: (k) => musubiRun(k, 'sqlite', 8),
};
const VARIANTS: readonly Variant[] = [
  BARE,
  SQLITE,
  EIGHT,
  ...(ALL
    ? [
        { name: 'musubi executeRun, memory store, 1 worker', run: (k: number) => musubiRun(k, 'memory', 1) },
        { name: 'musubi executeRun, SQLite store, 2 workers', run: (k: number) => musubiRun(k, 'sqlite', 2) },
      ]
    : []),
];

const median = (values: readonly number[]): number => percentile(values, 50);

/** Times of execFile calls of `true` (no git at all): what starting any process costs here. */
const processStarts: number[] = [];

async function sampleProcessStarts(count: number): Promise<void> {
  const times = processStarts;
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await new Promise<void>((resolve, reject) =>
      execFile('true', [], { env: gitEnv }, (err) => (err === null ? resolve() : reject(err))),
    );
    times.push(performance.now() - started);
  }
}

/** The sample of median wall time (its CPU and profile go with it in the table). */
function medianSample(samples: readonly Sample[]): Sample | undefined {
  return [...samples].sort((a, b) => a.ms - b.ms)[Math.ceil(samples.length / 2) - 1];
}

/** What the runs of one variant at one K gave. */
interface Outcomes {
  readonly samples: Sample[];
  readonly failures: string[];
}

const outcomes = new Map<string, Outcomes>();
const outcomesOf = (variant: Variant, k: number): Outcomes => {
  const key = `${variant.name}|${k}`;
  const found = outcomes.get(key) ?? { samples: [], failures: [] };
  outcomes.set(key, found);
  return found;
};

/** Runs one measurement; the baseline and the main musubi variant must not fail, the others are recorded. */
async function attempt(variant: Variant, k: number, into?: Outcomes): Promise<void> {
  try {
    const sample = await variant.run(k);
    into?.samples.push(sample);
  } catch (err) {
    if (variant === BARE || variant === SQLITE) throw err;
    const message = err instanceof Error ? err.message : String(err);
    console.error(`${variant.name}, K=${k}: failed: ${message}`);
    (into ?? outcomesOf(variant, k)).failures.push(message);
  }
}

/** Per-subtask wall time of a variant at K (median run / K). */
const perSubtask = (variant: Variant, k: number): number =>
  median(outcomesOf(variant, k).samples.map((s) => s.ms)) / k;

function mainRows(): BenchRow[] {
  const rows: BenchRow[] = [];
  for (const k of SUBTASKS) {
    const bare = perSubtask(BARE, k);
    for (const variant of VARIANTS) {
      const { samples, failures } = outcomesOf(variant, k);
      const mid = medianSample(samples);
      const ms = perSubtask(variant, k);
      rows.push({
        implementation: variant.name,
        subtasks: k,
        runs: samples.length,
        'failed runs': failures.length,
        'run p50 ms': ms * k,
        'run min ms': Math.min(...samples.map((s) => s.ms)),
        'per subtask ms': ms,
        'git calls/subtask': mid === undefined ? Number.NaN : mid.profile.count / k,
        'git wall ms/subtask': mid === undefined ? Number.NaN : mid.profile.ms / k,
        'git CPU ms/subtask': mid === undefined ? Number.NaN : mid.gitCpuMs / k,
        'node CPU ms/subtask': mid === undefined ? Number.NaN : mid.selfCpuMs / k,
        ratio: ms / bare,
        'overhead ms/subtask': variant === BARE ? '' : ms - bare,
      });
    }
  }
  return rows;
}

const [SMALL, LARGE] = [SUBTASKS[0], SUBTASKS[SUBTASKS.length - 1] ?? SUBTASKS[0]];

/** What one more subtask costs: the difference of the median runs at the two K, which drops fixed costs. */
const marginal = (variant: Variant): number =>
  (perSubtask(variant, LARGE) * LARGE - perSubtask(variant, SMALL) * SMALL) / (LARGE - SMALL);

function marginalRows(): BenchRow[] {
  return VARIANTS.map((variant) => ({
    implementation: variant.name,
    'ms per extra subtask': marginal(variant),
    ratio: marginal(variant) / marginal(BARE),
    'overhead ms/subtask': variant === BARE ? '' : marginal(variant) - marginal(BARE),
  }));
}

/** Every git call of a variant's runs at K = LARGE, summed, with the runs' total wall time. */
function profileOf(variant: Variant): { profile: GitProfile; saves: Tally; runs: number; ms: number } {
  const { samples } = outcomesOf(variant, LARGE);
  const profile = new GitProfile();
  const saves = { count: 0, ms: 0 };
  for (const s of samples) {
    profile.merge(s.profile);
    saves.count += s.saves.count;
    saves.ms += s.saves.ms;
  }
  return { profile, saves, runs: samples.length, ms: samples.reduce((n, s) => n + s.ms, 0) };
}

function profileRows(): BenchRow[] {
  const musubi = profileOf(SQLITE);
  const bare = profileOf(BARE);
  const perSub = (value: number, runs: number): number => value / (runs * LARGE);
  const subcommands = [...new Set([...musubi.profile.calls.keys(), ...bare.profile.calls.keys()])].sort(
    (a, b) => (musubi.profile.calls.get(b)?.ms ?? 0) - (musubi.profile.calls.get(a)?.ms ?? 0),
  );
  const rows: BenchRow[] = subcommands.map((sub) => {
    const m = musubi.profile.calls.get(sub) ?? { count: 0, ms: 0 };
    const b = bare.profile.calls.get(sub) ?? { count: 0, ms: 0 };
    return {
      implementation: `git ${sub}`,
      'musubi calls/subtask': perSub(m.count, musubi.runs),
      'musubi ms/subtask': perSub(m.ms, musubi.runs),
      'bare calls/subtask': perSub(b.count, bare.runs),
      'bare ms/subtask': perSub(b.ms, bare.runs),
      'musubi ms/call': m.count > 0 ? m.ms / m.count : '',
      'bare ms/call': b.count > 0 ? b.ms / b.count : '',
    };
  });
  const total = (p: typeof musubi): number => perSub(p.profile.ms, p.runs);
  const outside = (p: typeof musubi): number => perSub(p.ms - p.profile.ms - p.saves.ms, p.runs);
  rows.push(
    {
      implementation: 'all git calls',
      'musubi calls/subtask': perSub(musubi.profile.count, musubi.runs),
      'musubi ms/subtask': total(musubi),
      'bare calls/subtask': perSub(bare.profile.count, bare.runs),
      'bare ms/subtask': total(bare),
    },
    {
      implementation: 'run record writes (RunLedger.save: schema parse + KV compare-and-set)',
      'musubi calls/subtask': perSub(musubi.saves.count, musubi.runs),
      'musubi ms/subtask': perSub(musubi.saves.ms, musubi.runs),
      'musubi ms/call': musubi.saves.count > 0 ? musubi.saves.ms / musubi.saves.count : '',
    },
    {
      implementation: 'the rest (bus events, plan, agent turn, folder checks)',
      'musubi ms/subtask': outside(musubi),
      'bare ms/subtask': outside(bare),
    },
  );
  return rows;
}

async function main(): Promise<void> {
  const started = performance.now();
  // One warm-up round of everything (JIT, git's page cache, SQLite), not counted.
  for (const variant of VARIANTS) await attempt(variant, SMALL);
  for (let rep = 0; rep < REPS; rep++) {
    for (const k of SUBTASKS) {
      // Rotate the order so a change of machine load does not always hit the same variant.
      for (let v = 0; v < VARIANTS.length; v++) {
        const variant = VARIANTS[(v + rep) % VARIANTS.length];
        if (variant !== undefined) await attempt(variant, k, outcomesOf(variant, k));
      }
      await sampleProcessStarts(5);
    }
  }
  const spawnMs = median(processStarts);
  const load = loadavg()[0] ?? 0;
  const mainTable = printTable(
    `executeRun vs bare git, zero-latency agent, K implement subtasks (median of ${REPS} runs)`,
    mainRows(),
  );
  const marginalTable = printTable(
    `cost of one more subtask ((median run at K=${LARGE} - median run at K=${SMALL}) / ${LARGE - SMALL})`,
    marginalRows(),
  );
  const profileTable = printTable(
    `git calls per subtask at K=${LARGE}, SQLite store, 1 worker vs bare git (all ${REPS} runs)`,
    profileRows(),
  );
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `total ${seconds.toFixed(1)} s, load average ${load.toFixed(1)} at the end, process start ${spawnMs.toFixed(1)} ms`,
  );

  const failures = VARIANTS.flatMap((variant) =>
    SUBTASKS.flatMap((k) => {
      const list = outcomesOf(variant, k).failures;
      return list.length === 0
        ? []
        : [`- ${variant.name}, K=${k}: ${list.length} failed run(s): ${[...new Set(list)].join('; ')}`];
    }),
  );
  // From the median runs, as in the first table.
  const musubi = medianSample(outcomesOf(SQLITE, LARGE).samples);
  const bare = medianSample(outcomesOf(BARE, LARGE).samples);
  const extraCalls = ((musubi?.profile.count ?? Number.NaN) - (bare?.profile.count ?? Number.NaN)) / LARGE;
  const extraGitMs = ((musubi?.profile.ms ?? Number.NaN) - (bare?.profile.ms ?? Number.NaN)) / LARGE;
  const ms = perSubtask(SQLITE, LARGE);
  const bareMs = perSubtask(BARE, LARGE);
  const heading = '## musubi run: orchestration overhead';
  const section = [
    heading,
    '',
    '`npx tsx bench/run.bench.ts` (or `npm run bench -- run.bench`) — `executeRun` in process with a',
    'zero-latency agent (each worker turn writes the file its instruction names and returns; the manager',
    'answers a plan of K implement subtasks and empty docs and review phases) on a real git repository in a',
    `temp dir (README.md and ${REPO_FILES} small files, one commit), against the bare git commands the same work`,
    'needs, run the same way (`execFile`, no shell, same environment) in the same kind of repository:',
    '`git worktree add -b` per subtask, the file, `git add -A` and `git commit`, `git worktree remove`, then',
    '`git merge --no-ff` of each branch in an integration worktree (added first, removed last). Each',
    'measurement gets a fresh repository; the variants take turns; one warm-up round is not counted. The',
    "SQLite store is where `musubi run` keeps it by default (`<top>/.musubi/bus.db`). Overhead is musubi's",
    'time per subtask minus the bare git time per subtask, so what musubi costs beyond the git operations',
    'themselves (the spec: worktree create/remove, integration and test gate excluded). The baseline removes',
    'worktrees with `--force` as musubi does (without it git first runs `git status` in a child). `--all`',
    'adds the memory store and 2 workers (two subtasks at once, so that ratio is against the serial baseline).',
    'The 8-worker row runs up to 8 subtasks at once (its ratio is against the serial baseline too); a run that',
    'does not succeed with every file on its branch fails the bench. Every turn is a delivery on the run',
    "store's bus (sent to the member's mailbox, claimed under a lease, acked), which is in `the rest`.",
    '',
    `Last run${ALL ? ' (with --all)' : ''}: ${machineLine()} · load average ${load.toFixed(1)} at the end of the run · ${seconds.toFixed(0)} s in all`,
    '',
    mainTable,
    marginalTable,
    profileTable,
    `At K=${LARGE} (SQLite store, 1 worker) musubi takes ${ms.toFixed(1)} ms per subtask against ${bareMs.toFixed(1)} ms of bare`,
    `git (${(ms / bareMs).toFixed(2)}x, ${(ms - bareMs).toFixed(1)} ms of overhead per subtask). It makes ${extraCalls.toFixed(1)} more git`,
    `calls per subtask than the bare sequence, which take ${extraGitMs.toFixed(1)} ms more (median runs).`,
    `Starting any process (\`execFile\` of \`true\` between the runs, median) takes ${spawnMs.toFixed(1)} ms here, so most of a git call's`,
    'time on this machine is the process start, and the overhead scales with the number of git calls.',
    '',
    "Where musubi's extra git calls come from (src/runs): before each subtask a `rev-parse` of the",
    "integration worktree's HEAD, and in `RunWorktrees.fresh` a `worktree prune` (through `remove`) and a",
    '`branch -D` of the branch it is about to create; `diff --cached --quiet` before the commit and a',
    "`rev-parse` of the worker's commit after it; a `worktree prune` after `worktree remove`; `branch -D`",
    'after the merge; and at the end of the run, for every subtask once more, a `worktree prune`',
    '(`removeAll`) and a `branch -D` of the branch the merge step already deleted. Outside git, the run',
    'record is written (schema-parsed in full, then a KV compare-and-set) after every step.',
    'With 2 workers, `git wall ms/subtask` adds up calls that overlap, so it can exceed the wall time.',
    ...(failures.length === 0 ? [] : ['', 'Failed runs (left out of the numbers):', ...failures]),
    '',
  ].join('\n');
  writeResultsSection(heading, section);
}

try {
  await main();
} finally {
  rmSync(root, { recursive: true, force: true });
}
