import { hostname } from 'node:os';
import { z } from 'zod';
import type { KvState } from '../bus/bus.types.js';
import type { Clock, Timer } from '../core/clock.js';
import { isMusubiError, MusubiError } from '../core/errors.js';

/** How long an owner's claim on a run lasts without a renewal: a run whose owner died is free after it. */
export const RUN_OWNER_LEASE_MS = 30_000;
/** Renewals per lease: a renewal every 10 s keeps a 30 s lease with two chances to spare. */
const RENEWALS_PER_LEASE = 3;
const PREFIX = 'run-owner/';

const ownerSchema = z.strictObject({
  /** Names one process's claim (host, pid and a random part): a restarted process is another owner. */
  owner: z.string().min(1).max(300),
  host: z.string().max(255),
  pid: z.number().int().positive(),
  since: z.number().int().nonnegative(),
  expiresAt: z.number().int().nonnegative(),
});
type OwnerRecord = z.infer<typeof ownerSchema>;

/** Who holds a run, as {@link RunOwners.holderOf} reports it. */
export interface RunHolder {
  readonly host: string;
  readonly pid: number;
  readonly since: number;
  readonly expiresAt: number;
}

/** A claim on one run, renewed while held; `lost` aborts when another owner took it over. */
export interface RunClaim {
  /** Aborted when a renewal finds the run taken by another owner (this process stalled past its lease). */
  readonly lost: AbortSignal;
  /** Stops renewing and gives the run up (when still held). Idempotent; never rejects. */
  release(): Promise<void>;
}

/** Options of {@link RunOwners}. */
export interface RunOwnersOptions {
  readonly kv: KvState;
  readonly clock: Clock;
  /** Default {@link RUN_OWNER_LEASE_MS}. */
  readonly leaseMs?: number;
  /** This process: default the machine's host name and `process.pid`. */
  readonly self?: { readonly host: string; readonly pid: number };
  /** Whether a process of this host still runs; default `process.kill(pid, 0)`. */
  readonly isProcessAlive?: (pid: number) => boolean;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user. ESRCH: gone.
    return err instanceof Error && 'code' in err && err.code === 'EPERM';
  }
}

/**
 * One owner per run, through a lease in the run store's KV (`run-owner/<id>`, compare-and-set): the
 * process that runs a run claims it before it touches anything, renews the claim while it runs and
 * releases it at the end. A second process that wants the same run (a second `--resume`, the page's
 * Resume) is refused with RUN_ACTIVE at once. A claim whose owner died is free once its lease lapsed,
 * or at once when the owner was a process of this host that no longer runs. Works on every store, so
 * owners on other hosts (a NATS store) exclude each other too.
 */
export class RunOwners {
  readonly #kv: KvState;
  readonly #clock: Clock;
  readonly #leaseMs: number;
  readonly #self: { readonly host: string; readonly pid: number };
  readonly #isProcessAlive: (pid: number) => boolean;

  constructor(options: RunOwnersOptions) {
    this.#kv = options.kv;
    this.#clock = options.clock;
    this.#leaseMs = options.leaseMs ?? RUN_OWNER_LEASE_MS;
    this.#self = options.self ?? { host: hostname(), pid: process.pid };
    this.#isProcessAlive = options.isProcessAlive ?? processAlive;
  }

  /** Who holds `runId` now, or undefined when nobody's claim is alive. */
  async holderOf(runId: string): Promise<RunHolder | undefined> {
    const entry = await this.#kv.kvGet(`${PREFIX}${runId}`);
    const held = entry === null ? undefined : ownerSchema.safeParse(entry.value).data;
    if (held === undefined || !this.#isAlive(held)) return undefined;
    return { host: held.host, pid: held.pid, since: held.since, expiresAt: held.expiresAt };
  }

  /**
   * Claims `runId` for this process. Throws RUN_ACTIVE (naming the owner) when another live owner
   * holds it, including one that claimed it in the same instant.
   */
  async claim(runId: string): Promise<RunClaim> {
    const key = `${PREFIX}${runId}`;
    const entry = await this.#kv.kvGet(key);
    const held = entry === null ? undefined : ownerSchema.safeParse(entry.value).data;
    if (held !== undefined && this.#isAlive(held)) throw this.#active(runId, held);
    const now = this.#clock.now();
    const mine: OwnerRecord = {
      owner: `${this.#self.host}:${this.#self.pid}:${Math.random().toString(36).slice(2, 10)}`,
      host: this.#self.host,
      pid: this.#self.pid,
      since: now,
      expiresAt: now + this.#leaseMs,
    };
    let revision: number;
    try {
      revision = (await this.#kv.kvSet(key, mine, { expectedRevision: entry?.revision ?? 0 })).revision;
    } catch (err) {
      if (!isMusubiError(err, 'STORE_CONFLICT')) throw err;
      // Someone claimed it between our read and our write: theirs is the live claim.
      const winner = await this.holderOf(runId);
      throw this.#active(runId, winner ?? { ...mine, host: 'another process', pid: 1 });
    }
    return this.#held(key, mine, revision);
  }

  #held(key: string, mine: OwnerRecord, firstRevision: number): RunClaim {
    const lost = new AbortController();
    let revision = firstRevision;
    let timer: Timer | undefined;
    let isReleased = false;
    let renewing: Promise<void> = Promise.resolve();
    const renew = async (): Promise<void> => {
      const next = { ...mine, expiresAt: this.#clock.now() + this.#leaseMs };
      try {
        revision = (await this.#kv.kvSet(key, next, { expectedRevision: revision })).revision;
      } catch (err) {
        if (isMusubiError(err, 'STORE_CONFLICT')) {
          lost.abort(new MusubiError('RUN_ACTIVE', 'another process took this run over', { cause: err }));
          return;
        }
        // The store is away for a moment: try again at the next turn of the timer; the lease has slack.
      }
      schedule();
    };
    const schedule = (): void => {
      if (isReleased || lost.signal.aborted) return;
      timer = this.#clock.setTimer(() => {
        renewing = renew();
      }, this.#leaseMs / RENEWALS_PER_LEASE);
    };
    schedule();
    let releasing: Promise<void> | undefined;
    const release = (): Promise<void> =>
      (releasing ??= (async () => {
        isReleased = true;
        timer?.cancel();
        await renewing;
        if (lost.signal.aborted) return;
        // Only our own claim is removed; a conflict means it is someone else's now.
        await this.#kv.kvDelete(key, { expectedRevision: revision }).catch(() => undefined);
      })());
    return { lost: lost.signal, release };
  }

  #isAlive(held: OwnerRecord): boolean {
    if (held.expiresAt <= this.#clock.now()) return false;
    // An owner of this host that no longer runs (kill -9) frees the run at once, not after its lease.
    if (held.host === this.#self.host && held.pid !== this.#self.pid) return this.#isProcessAlive(held.pid);
    return true;
  }

  #active(runId: string, held: Pick<OwnerRecord, 'host' | 'pid' | 'since'>): MusubiError {
    const since = new Date(held.since).toISOString();
    return new MusubiError(
      'RUN_ACTIVE',
      `run ${runId} is running (process ${held.pid} on ${held.host}, since ${since}); stop it there, or ` +
        `wait for it to end: a run whose process died can be resumed once its claim lapses ` +
        `(${Math.round(this.#leaseMs / 1000)} s at most)`,
      { details: { runId, host: held.host, pid: held.pid } },
    );
  }
}
