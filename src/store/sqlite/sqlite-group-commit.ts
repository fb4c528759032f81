import type Database from 'better-sqlite3';
import { MusubiError } from '../../core/errors.js';
import { storeFailure } from './sqlite-errors.js';

/** Most operations one transaction runs; the rest wait for the next turn. */
export const MAX_BATCH = 512;

/** An operation's failure, told apart from any value an operation may return. */
class Failure {
  constructor(readonly error: unknown) {}
}

/** What an operation left behind: its value (to hand over after the commit) or its {@link Failure}. */
type Outcome = unknown;

interface PendingOperation {
  /** Name used in error messages (`append`, `claim`, ...). */
  readonly operation: string;
  /** Runs the operation's statements; returns its value. */
  readonly run: () => unknown;
  /** Runs right after the COMMIT that made the operation durable, before its promise resolves. */
  readonly onCommitted: ((value: never) => void) | undefined;
  readonly resolve: (value: never) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * Group commit for one SQLite connection. Writes issued while a batch is open are queued and run
 * together, in call order, in ONE transaction on the next turn of the event loop (setImmediate):
 * `BEGIN IMMEDIATE`, the operations, then `COMMIT`. An operation that throws (LEASE_EXPIRED, NOT_FOUND,
 * STORE_CONFLICT, STORE_CORRUPT, a SQLite error) is undone alone and rejects only its own promise: the
 * batch then runs again with each operation inside its own SAVEPOINT (see #transaction).
 *
 * Contract: a promise settles only after its batch's COMMIT returned, so a resolved write is exactly
 * as durable as a lone transaction (see the fsync policy on SqliteStore). When BEGIN or COMMIT fails
 * (SQLITE_BUSY past busy_timeout, I/O, full disk) every operation of the batch rejects with that failure,
 * coded by {@link storeFailure}; one whose own statements had already failed keeps its own error. When
 * SQLite rolls the whole transaction back by itself mid-batch (some I/O and full-disk errors do), the
 * operations already run reject with that failure and the ones not yet run go back to the queue.
 * At most {@link MAX_BATCH} operations share a transaction.
 */
export class SqliteGroupCommit {
  readonly #db: Database.Database;
  readonly #begin: Database.Statement<[]>;
  readonly #commit: Database.Statement<[]>;
  readonly #rollback: Database.Statement<[]>;
  readonly #savepoint: Database.Statement<[]>;
  readonly #release: Database.Statement<[]>;
  readonly #rollbackTo: Database.Statement<[]>;
  readonly #onCommitted: (writes: number) => void;
  readonly #beforeBegin: () => void;
  #queue: PendingOperation[] = [];
  #scheduled: NodeJS.Immediate | undefined;
  #isClosed = false;

  /**
   * `onCommitted` hears, right after each COMMIT, how many writes it made durable. It must not throw:
   * it runs before the batch's promises settle. `beforeBegin` runs before each batch's BEGIN (the
   * store ends its shared read transaction there).
   */
  constructor(
    db: Database.Database,
    options: { onCommitted: (writes: number) => void; beforeBegin?: () => void },
  ) {
    this.#db = db;
    this.#onCommitted = options.onCommitted;
    this.#beforeBegin = options.beforeBegin ?? ((): void => undefined);
    this.#begin = db.prepare('BEGIN IMMEDIATE');
    this.#commit = db.prepare('COMMIT');
    this.#rollback = db.prepare('ROLLBACK');
    this.#savepoint = db.prepare('SAVEPOINT musubi_op');
    this.#release = db.prepare('RELEASE musubi_op');
    this.#rollbackTo = db.prepare('ROLLBACK TO musubi_op');
  }

  /**
   * Queues a write; resolves with `fn`'s result once its batch committed, rejects with what `fn` threw
   * (its statements rolled back, the rest of the batch unaffected) or with the batch's failure.
   * `onCommitted` runs with the result synchronously right after that COMMIT, in call order with the
   * other operations' (so state kept beside the database follows it exactly); it must not throw.
   * Rejects STORE_CLOSED after {@link SqliteGroupCommit.close}.
   */
  write<T>(operation: string, fn: () => T, onCommitted?: (value: T) => void): Promise<T> {
    if (this.#isClosed) return Promise.reject(new MusubiError('STORE_CLOSED', 'SQLite store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ operation, run: fn, onCommitted, resolve, reject });
      this.#scheduled ??= setImmediate(this.#onTurn);
    });
  }

  /**
   * Runs what is queued now, in as many batches as it takes (those operations settle as usual), then
   * refuses new ones. Idempotent.
   */
  close(): void {
    this.#isClosed = true;
    clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    while (this.#queue.length > 0) this.#runBatch();
  }

  readonly #onTurn = (): void => {
    this.#scheduled = undefined;
    this.#runBatch();
    if (this.#queue.length > 0) this.#scheduled = setImmediate(this.#onTurn);
  };

  #runBatch(): void {
    const batch = this.#take();
    let outcomes: Outcome[];
    try {
      outcomes = this.#transaction(batch);
    } catch (err) {
      // Only a failing ROLLBACK gets here: fail the whole batch, leave no promise hanging, and end
      // the transaction so the next batch can begin.
      outcomes = batch.map((op) => new Failure(storeFailure(err, op.operation)));
      this.#abort();
    }
    // Settle in call order, after the commit; continuations run later, on the microtask queue.
    for (let i = 0; i < outcomes.length; i++) {
      const outcome = outcomes[i];
      const op = batch[i];
      if (op === undefined) continue;
      if (outcome instanceof Failure) op.reject(outcome.error);
      else op.resolve(outcome as never);
    }
  }

  #abort(): void {
    try {
      if (this.#db.inTransaction) this.#rollback.run();
    } catch {
      // The connection is unusable; the next batch's BEGIN reports that to its callers.
    }
  }

  #take(): PendingOperation[] {
    if (this.#queue.length <= MAX_BATCH) {
      const batch = this.#queue;
      this.#queue = [];
      return batch;
    }
    return this.#queue.splice(0, MAX_BATCH);
  }

  /**
   * Runs `batch` in one transaction; returns one outcome per operation that ran, in order. The batch
   * first runs without savepoints (four statements per operation saved); only when an operation throws
   * is the transaction rolled back and the batch run again with a savepoint around each operation, so
   * the failing one is undone alone. Operations may run twice that way: they only touch the database
   * and caches that re-running fills in again, and their promises settle once, from the run that counted.
   */
  #transaction(batch: PendingOperation[]): Outcome[] {
    const notBegun = this.#begins(batch);
    if (notBegun !== null) return notBegun;
    let outcomes = this.#runPlain(batch);
    if (outcomes === null) {
      if (this.#db.inTransaction) this.#rollback.run();
      const again = this.#begins(batch);
      if (again !== null) return again;
      outcomes = [];
      for (const [i, op] of batch.entries()) {
        const outcome = this.#inSavepoint(op);
        outcomes.push(outcome);
        if (!this.#db.inTransaction) return this.#abandoned(batch, outcomes, i);
      }
    }
    // A lone operation that failed was rolled back already: nothing is left to commit.
    if (!this.#db.inTransaction) return outcomes;
    try {
      this.#commit.run();
    } catch (err) {
      if (this.#db.inTransaction) this.#rollback.run();
      return outcomes.map((o, i) =>
        o instanceof Failure ? o : new Failure(storeFailure(err, batch[i]?.operation ?? 'commit')),
      );
    }
    let committed = 0;
    for (let i = 0; i < outcomes.length; i++) {
      const outcome = outcomes[i];
      if (outcome instanceof Failure) continue;
      committed++;
      batch[i]?.onCommitted?.(outcome as never);
    }
    this.#onCommitted(committed);
    return outcomes;
  }

  /** Begins the batch's transaction; null when it began, else the batch's failures. */
  #begins(batch: PendingOperation[]): Outcome[] | null {
    try {
      this.#beforeBegin();
      this.#begin.run();
      return null;
    } catch (err) {
      return batch.map((op) => new Failure(storeFailure(err, op.operation)));
    }
  }

  /**
   * Runs every operation of `batch` with no savepoints; null once one throws (the caller rolls back).
   * A batch of one needs no savepoint at all: its failure is its own, and rolling back undoes just it.
   */
  #runPlain(batch: PendingOperation[]): Outcome[] | null {
    const outcomes: Outcome[] = [];
    for (const op of batch) {
      try {
        outcomes.push(op.run());
      } catch (err) {
        if (batch.length > 1) return null;
        if (this.#db.inTransaction) this.#rollback.run();
        return [new Failure(storeFailure(err, op.operation))];
      }
    }
    return outcomes;
  }

  #inSavepoint(op: PendingOperation): Outcome {
    this.#savepoint.run();
    try {
      const value = op.run();
      this.#release.run();
      return value;
    } catch (err) {
      // Undo this operation only; the transaction (and the operations before it) stays open.
      if (this.#db.inTransaction) {
        this.#rollbackTo.run();
        this.#release.run();
      }
      return new Failure(storeFailure(err, op.operation));
    }
  }

  /**
   * SQLite rolled the transaction back by itself while running `batch[failed]`: what ran before is
   * lost, so those operations fail too; the ones after it never ran and go back to the queue's front.
   */
  #abandoned(batch: PendingOperation[], outcomes: Outcome[], failed: number): Outcome[] {
    const last = outcomes[failed];
    const cause = last instanceof Failure ? last.error : undefined;
    const lost = new MusubiError(
      'STORE_UNAVAILABLE',
      'SQLite rolled back the transaction this operation was part of',
      { cause },
    );
    this.#queue.unshift(...batch.slice(failed + 1));
    return outcomes.map((o) => (o instanceof Failure ? o : new Failure(lost)));
  }
}
