import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import type { Clock, Timer } from '../../core/clock.js';
import { backupPathOf } from './sqlite-file-health.js';

/** A backup is taken at most this often: a store changed since its backup gets a new one this long after. */
export const BACKUP_INTERVAL_MS = 10 * 60_000;
/**
 * A store with no backup yet gets its first this long after open once something was committed: long
 * enough that short-lived processes (a CLI command, a test) skip it (the next open of the file takes
 * it), short enough that a hub's new store soon has one.
 */
const FIRST_BACKUP_DELAY_MS = 60_000;
/** How long close() waits for a running backup before stopping it (and dropping its copy). */
const CLOSE_TIMEOUT_MS = 10_000;
/** How many problems of a damaged copy are reported. */
const PROBLEM_LIMIT = 20;

// CommonJS, evaluated in the worker thread: copy, check the copy, keep it only when it is sound.
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { dirname } = require('node:path');
const Database = require(workerData.driver);
const { source, temp, target, limit } = workerData;
const removeTemp = () => {
  for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(temp + suffix, { force: true });
};
const isDamage = (err) => typeof err?.code === 'string' && /^SQLITE_(CORRUPT|NOTADB)/.test(err.code);
async function copy() {
  // Created first with mode 0600, so the copy is never readable by others, not even for a moment.
  fs.closeSync(fs.openSync(temp, 'wx', 0o600));
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    // One step: the whole copy is one read transaction, so it is one consistent state of the file
    // however busy its writers are (with steps, a write by another connection restarts the copy).
    await db.backup(temp, { progress: () => 0x7fffffff });
  } finally {
    db.close();
  }
}
function problemsOf(file) {
  const db = new Database(file, { fileMustExist: true });
  try {
    return db.pragma('integrity_check(' + limit + ')').map((row) => String(Object.values(row)[0])).filter((t) => t !== 'ok');
  } finally {
    db.close();
  }
}
function keep() {
  const fd = fs.openSync(temp, 'r+');
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  fs.renameSync(temp, target);
  try {
    const dir = fs.openSync(dirname(target), 'r');
    fs.fsyncSync(dir);
    fs.closeSync(dir);
  } catch {
    // A folder cannot be fsynced everywhere (Windows); the rename itself is still atomic.
  }
}
(async () => {
  try {
    await copy();
    const problems = problemsOf(temp);
    if (problems.length > 0) {
      removeTemp();
      parentPort.postMessage({ kind: 'damaged', problems });
      return;
    }
    keep();
    parentPort.postMessage({ kind: 'kept' });
  } catch (err) {
    removeTemp();
    const message = String(err?.message ?? err);
    parentPort.postMessage(isDamage(err) ? { kind: 'damaged', problems: [message] } : { kind: 'failed', message });
  }
})();
`;

const threadOutcome = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('kept') }),
  z.object({ kind: z.literal('damaged'), problems: z.array(z.string()) }),
  z.object({ kind: z.literal('failed'), message: z.string() }),
]);

/** Options of {@link SqliteBackup}. */
export interface SqliteBackupOptions {
  readonly path: string;
  readonly clock: Clock;
  /** When the backup found at open was taken (its file's time), or null when there is none. */
  readonly takenAt: number | null;
  /** Hears that a copy of the file failed its integrity check: the file itself is damaged. */
  readonly onDamaged: (problems: readonly string[]) => void;
}

/**
 * Keeps `<db>.backup`, a copy of the store file made with SQLite's online backup API on a worker thread
 * with its own read-only connection, so the event loop and the writers never wait for it. The copy is
 * written to a temporary file (mode 0600), checked with `PRAGMA integrity_check`, and only when sound
 * renamed over the previous backup: a damaged file never replaces a good backup (onDamaged hears of it).
 *
 * At most one backup per {@link BACKUP_INTERVAL_MS}: at open, for a file that held data and passed its
 * check, when there is none or it is older and the file changed since (by the backup file's time, so
 * short-lived processes sharing the file share this schedule); while open, once something was
 * committed, that long after the previous backup (a minute after open when there is none); at close,
 * when something was committed and that time has come. close() waits for a running backup (at most
 * 10 s, then stops it and drops its copy).
 */
export class SqliteBackup {
  readonly #path: string;
  readonly #clock: Clock;
  readonly #onDamaged: (problems: readonly string[]) => void;
  /** When the last backup this store knows of was taken or tried; the interval counts from here. */
  #takenAt: number | null;
  readonly #openedAt: number;
  #isDirty = false;
  #isClosed = false;
  #timer: Timer | undefined;
  #thread: Worker | undefined;
  #running: Promise<void> | undefined;

  constructor(options: SqliteBackupOptions) {
    this.#path = options.path;
    this.#clock = options.clock;
    this.#onDamaged = options.onDamaged;
    this.#takenAt = options.takenAt;
    this.#openedAt = options.clock.now();
  }

  /** Takes a backup now if one is due for a file opened with data that changed at `changedAt`. */
  afterOpen(changedAt: number): void {
    const takenAt = this.#takenAt;
    if (takenAt === null || (this.#isDue() && changedAt > takenAt)) this.#start();
  }

  /** Notes a commit; arms the periodic backup. Never throws (it runs right after a COMMIT). */
  noteCommit(): void {
    this.#isDirty = true;
    this.#arm();
  }

  /** Takes the backup due at close, then waits for a running one (at most 10 s). Never rejects. */
  async close(): Promise<void> {
    if (!this.#isClosed) {
      this.#isClosed = true;
      this.#timer?.cancel();
      this.#timer = undefined;
      if (this.#running === undefined && this.#isDirty && this.#isDue()) this.#start();
    }
    const thread = this.#thread;
    if (thread === undefined) return;
    // Someone awaits this now: an unref'd thread would let the process end first (exit code 13).
    thread.ref();
    const timer = setTimeout(() => void thread.terminate(), CLOSE_TIMEOUT_MS);
    timer.unref();
    await this.#running;
    clearTimeout(timer);
  }

  /** Arms the timer of the next periodic backup, unless one is armed or running. */
  #arm(): void {
    if (this.#isClosed || this.#timer !== undefined || this.#running !== undefined) return;
    const delayMs = this.#dueAt() - this.#clock.now();
    this.#timer = this.#clock.setTimer(
      () => {
        this.#timer = undefined;
        if (!this.#isClosed && this.#isDirty) this.#start();
      },
      Math.max(0, delayMs),
    );
  }

  #dueAt(): number {
    const takenAt = this.#takenAt;
    return takenAt === null ? this.#openedAt + FIRST_BACKUP_DELAY_MS : takenAt + BACKUP_INTERVAL_MS;
  }

  #isDue(): boolean {
    return this.#clock.now() >= this.#dueAt();
  }

  #start(): void {
    this.#isDirty = false;
    const target = backupPathOf(this.#path);
    const temp = `${target}-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    let thread: Worker;
    try {
      thread = new Worker(THREAD_SOURCE, {
        eval: true,
        workerData: {
          driver: createRequire(import.meta.url).resolve('better-sqlite3'),
          source: this.#path,
          target,
          temp,
          limit: PROBLEM_LIMIT,
        },
      });
    } catch {
      // No worker thread where this runs: no backup, as before there were backups; the store works.
      return;
    }
    this.#thread = thread;
    this.#running = new Promise<void>((resolve) => {
      thread.once('message', (message: unknown) => this.#settle(message));
      thread.once('error', () => this.#noteFailure());
      thread.once('exit', () => {
        try {
          // A thread stopped by close() leaves its copy behind; a kept copy is no longer there.
          for (const suffix of ['', '-journal', '-wal', '-shm']) rmSync(temp + suffix, { force: true });
        } catch {
          // A stray copy beside the store costs only space; it must not take the process down.
        }
        this.#thread = undefined;
        this.#running = undefined;
        // Commits made while it ran are in the next one.
        if (this.#isDirty) this.#arm();
        resolve();
      });
    });
    // Last: adding a 'message' listener refs the thread's port again.
    thread.unref();
  }

  #settle(message: unknown): void {
    const outcome = threadOutcome.safeParse(message);
    if (!outcome.success || outcome.data.kind === 'failed') this.#noteFailure();
    else if (outcome.data.kind === 'kept') this.#takenAt = this.#clock.now();
    else this.#onDamaged(outcome.data.problems);
  }

  /** Not taken (say, the disk is full): tried again an interval later, if something changed. */
  #noteFailure(): void {
    this.#isDirty = true;
    this.#takenAt = this.#clock.now();
  }
}
