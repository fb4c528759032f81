import type { RunView } from '../gateways/http/api-schemas.js';
import type { RunSource } from '../gateways/http/http-ports.js';
import type { Bus } from '../bus/bus.types.js';
import { DEFAULT_MAX_CONCURRENT_RUNS } from '../core/config.schema.js';
import { isMusubiError, MusubiError } from '../core/errors.js';
import { Git } from '../runs/git.js';
import { RunOwners } from '../runs/run-owner.js';
import { isFinishedRun, RunLedger, type RunRecord } from '../runs/run-record.js';
import { executeOnBus, prepareRun, repository, type RunExecutionOptions } from './run-execution.js';

/** Options of {@link createRunSource}. */
export interface RunSourceOptions extends Omit<RunExecutionOptions, 'onProgress' | 'signal' | 'onRecord'> {
  /** The hub's bus: runs started from the page are recorded and run on it. */
  readonly bus: Bus;
  /** Where the hub runs; runs work on the repository holding it. */
  readonly cwd: string;
  /** Runs going at once; a start or resume beyond it is refused with RUN_LIMIT_REACHED. Default 2. */
  readonly maxConcurrentRuns?: number;
}

function viewOf(record: RunRecord, isActive: boolean): RunView {
  const { keepWorktrees: _keep, baseCommit: _base, subtasks, ...rest } = record;
  return { ...rest, subtasks: Object.values(subtasks), isActive };
}

/**
 * The runs of `musubi run` as the dashboard sees them: the hub's own store holds their records, and a
 * run started from the page runs in this process on the hub's bus (its turns in the hub's turn log, its
 * `run.*` events on the hub's event stream), on the repository the hub was started in. A stop aborts it
 * (it stays resumable); a resume continues it here. Runs started by `musubi run` in a terminal of the
 * same repository are in the same store (`<top>/.musubi/bus.db` by default) and show here too; one whose
 * process is alive shows as running, and its Resume is refused (RUN_ACTIVE, see `RunOwners`).
 */
export function createRunSource(o: RunSourceOptions): RunSource {
  const ledger = new RunLedger(o.bus.kv);
  const active = new Map<string, { readonly stop: AbortController; readonly done: Promise<unknown> }>();
  let where: Promise<{ gitDir: string } | { reason: string }> | undefined;
  const repo = (): Promise<{ gitDir: string } | { reason: string }> =>
    (where ??= repository(new Git(o.env), o.cwd).then(
      (r) => ({ gitDir: r.gitDir }),
      (err: unknown) => ({ reason: err instanceof Error ? err.message : String(err) }),
    ));
  const owners = new RunOwners({ kv: o.bus.kv, clock: o.clock });
  // Running here, or in another process whose claim on it is alive (a `musubi run` in a terminal).
  const isRunning = async (record: RunRecord): Promise<boolean> =>
    active.has(record.id) ||
    (record.status === 'running' && (await owners.holderOf(record.id)) !== undefined);
  const view = async (record: RunRecord): Promise<RunView> => viewOf(record, await isRunning(record));
  const limit = o.maxConcurrentRuns ?? DEFAULT_MAX_CONCURRENT_RUNS;
  let starting = 0;
  // Each run spends agent turns and runs its test command: a caller must not start them without bound.
  // A start holds its place while it prepares, so requests racing in cannot all pass the check.
  const withRoom = async <T>(work: () => Promise<T>): Promise<T> => {
    if (active.size + starting >= limit) {
      throw new MusubiError(
        'RUN_LIMIT_REACHED',
        `this hub already runs ${active.size + starting} run(s), its limit ` +
          `(gateways.http.maxConcurrentRuns: ${limit}); stop one or wait for it to end`,
        { details: { limit } },
      );
    }
    starting += 1;
    try {
      return await work();
    } finally {
      starting -= 1;
    }
  };

  /** Runs `record` in the background; resolves once it is in the ledger, rejects if it never got there. */
  const launch = async (record: RunRecord, isNew: boolean): Promise<RunRecord> => {
    const found = await repo();
    if ('reason' in found) throw new MusubiError('RUN_NOT_A_REPOSITORY', found.reason);
    const stop = new AbortController();
    let recorded: (record: RunRecord) => void = () => undefined;
    const started = new Promise<RunRecord>((resolve) => (recorded = resolve));
    const done = executeOnBus(
      { ...o, signal: stop.signal, onProgress: () => undefined, onRecord: (r) => recorded(r) },
      record,
      isNew,
      o.bus,
      found.gitDir,
    );
    active.set(record.id, { stop, done });
    const settled = done.then(
      (result) => {
        o.logger.info({ run: record.id, status: result.record.status }, 'run ended');
      },
      (err: unknown) => {
        o.logger.error({ err, run: record.id }, 'run failed');
      },
    );
    void settled.finally(() => active.delete(record.id));
    // A run that fails before it is recorded (a bad record) rejects here instead of hanging.
    return Promise.race([started, done.then(() => record)]);
  };

  return {
    async status() {
      const found = await repo();
      return 'reason' in found ? { canStart: false, reason: found.reason } : { canStart: true };
    },
    async list() {
      return Promise.all((await ledger.list()).map(view));
    },
    async get(id) {
      return view(await ledger.get(id));
    },
    async start(request) {
      return withRoom(async () => {
        const record = await prepareRun(
          { ...o, signal: new AbortController().signal, onProgress: () => undefined },
          { ...request, repo: o.cwd },
        );
        return view(await launch(record, true));
      });
    },
    async stop(id) {
      const run = active.get(id);
      if (run === undefined) {
        const record = await ledger.get(id);
        if (record.status !== 'running') return view(record);
        throw new MusubiError('RUN_ACTIVE', `run ${id} is not running in this hub; stop it where it runs`);
      }
      run.stop.abort();
      await run.done.catch(() => undefined);
      return view(await ledger.get(id));
    },
    async resume(id) {
      if (active.has(id)) throw new MusubiError('RUN_ACTIVE', `run ${id} is already running here`);
      const record = await ledger.get(id);
      const holder = await owners.holderOf(id);
      if (holder !== undefined) {
        throw new MusubiError(
          'RUN_ACTIVE',
          `run ${id} is running in process ${holder.pid} on ${holder.host}; stop it there first`,
          { details: { runId: id, host: holder.host, pid: holder.pid } },
        );
      }
      if (isFinishedRun(record.status)) return view(record);
      return withRoom(async () => {
        try {
          return view(await launch(record, false));
        } catch (err) {
          if (isMusubiError(err)) throw err;
          throw new MusubiError('INTERNAL', `could not resume run ${id}`, { cause: err });
        }
      });
    },
  };
}
