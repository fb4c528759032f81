import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/**
 * A checkpoint is requested after this many committed writes or this many commits, whichever comes
 * first: about SQLite's own 1,000 WAL pages either way (a commit of one write adds a few pages; a group
 * commit of 64 adds a few dozen, mostly the same hot pages). A checkpoint copies each page once however
 * often it changed since the last, so fewer of them under load is less work for the same durability.
 */
const WRITES_PER_CHECKPOINT = 1_024;
const COMMITS_PER_CHECKPOINT = 128;
/**
 * The main connection's own auto-checkpoint while the thread does the work: a safety net that only
 * fires when the WAL grew this large anyway (16 MiB at 4 KiB pages). The WAL restarts from its start
 * only when a write begins after a checkpoint that caught up with it, which under sustained load the
 * thread may not manage; this checkpoint then mostly finds the pages already copied.
 */
const SAFETY_NET_PAGES = 4_000;
/** SQLite's default, restored when the thread fails. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1_000;
/** How long close() waits for the thread to finish a checkpoint and close its connection. */
const CLOSE_TIMEOUT_MS = 5_000;

// CommonJS, evaluated in the worker thread: its own connection, one PASSIVE checkpoint per request.
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('synchronous = ' + workerData.synchronous);
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } finally {
    parentPort.postMessage('done');
  }
});
`;

/**
 * Runs WAL checkpoints on a worker thread with its own connection, so their fsyncs never stall the
 * event loop (a checkpoint on the main connection blocks it for milliseconds, which shows in every
 * receive that waits behind it). A PASSIVE checkpoint neither waits for nor blocks writers.
 *
 * The thread starts on the first request (after {@link WRITES_PER_CHECKPOINT} committed writes), so a
 * store that writes little never starts one; it is unref'd. Checkpoints fsync as the main connection's
 * `synchronous` says, so the durability contract is unchanged. If the thread fails, the main connection
 * goes back to SQLite's own auto-checkpoint. close() stops the thread (waiting for a running checkpoint,
 * at most 5 s) and never rejects.
 */
export class SqliteCheckpointer {
  readonly #db: Database.Database;
  readonly #path: string;
  readonly #synchronous: 'normal' | 'full';
  #thread: Worker | undefined;
  #writes = 0;
  #commits = 0;
  #isBusy = false;
  #isFailed = false;
  #isClosed = false;

  constructor(db: Database.Database, options: { path: string; synchronous: 'normal' | 'full' }) {
    this.#db = db;
    this.#path = options.path;
    this.#synchronous = options.synchronous;
    db.pragma(`wal_autocheckpoint = ${SAFETY_NET_PAGES}`);
  }

  /**
   * Counts one commit of `count` writes; every {@link WRITES_PER_CHECKPOINT} writes or
   * {@link COMMITS_PER_CHECKPOINT} commits asks the thread for a checkpoint. Never throws: it runs right
   * after a COMMIT, whose operations must not fail because of it.
   */
  noteCommit(count: number): void {
    if (this.#isFailed || this.#isClosed) return;
    this.#writes += count;
    this.#commits++;
    const isDue = this.#writes >= WRITES_PER_CHECKPOINT || this.#commits >= COMMITS_PER_CHECKPOINT;
    if (!isDue || this.#isBusy) return;
    this.#writes = 0;
    this.#commits = 0;
    this.#isBusy = true;
    try {
      (this.#thread ?? this.#start()).postMessage('checkpoint');
    } catch {
      // No thread (say, no worker_threads or no driver path where this runs): SQLite checkpoints itself.
      this.#fail();
    }
  }

  /** Stops the thread after a running checkpoint ends; idempotent. */
  close(): Promise<void> {
    this.#isClosed = true;
    const thread = this.#thread;
    if (thread === undefined) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => void thread.terminate(), CLOSE_TIMEOUT_MS);
      timer.unref();
      thread.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      // Someone awaits this now: an unref'd thread would let the process end first (exit code 13).
      thread.ref();
      thread.postMessage('close');
    });
  }

  #start(): Worker {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const thread = new Worker(THREAD_SOURCE, {
      eval: true,
      workerData: { driver, path: this.#path, synchronous: this.#synchronous.toUpperCase() },
    });
    thread.on('message', () => (this.#isBusy = false));
    thread.on('error', () => this.#fail());
    thread.once('exit', () => (this.#thread = undefined));
    // Last: adding a 'message' listener refs the thread's port again.
    thread.unref();
    this.#thread = thread;
    return thread;
  }

  /** The thread died (or never started): let SQLite checkpoint on the main connection again. */
  #fail(): void {
    this.#isFailed = true;
    if (this.#isClosed || !this.#db.open) return;
    try {
      this.#db.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
    } catch {
      // The connection is failing too; its own operations report that.
    }
  }
}
