import type Database from 'better-sqlite3';

/**
 * Lets the reads of one event-loop turn share one read transaction on the store's connection. In WAL
 * mode every statement run outside a transaction starts and ends a read transaction of its own, and
 * the first one after a commit pays for taking a fresh read mark (file locks on the shared-memory
 * index): about 5 µs, more than a small indexed query itself. Here the first read of a turn begins a
 * transaction and the rest of the turn's reads run in it; it ends at the end of the turn, and before
 * a write batch begins, so a read never misses a write whose promise has resolved.
 */
export class SqliteReadSnapshot {
  readonly #db: Database.Database;
  readonly #begin: Database.Statement<[]>;
  readonly #commit: Database.Statement<[]>;
  readonly #dataVersion: Database.Statement<[]>;
  #ending: NodeJS.Immediate | undefined;
  /** PRAGMA data_version as read in the open read transaction (undefined: not read in it yet). */
  #version: number | undefined;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#begin = db.prepare('BEGIN');
    this.#commit = db.prepare('COMMIT');
    this.#dataVersion = db.prepare('PRAGMA data_version').pluck();
  }

  /** Runs `read` in this turn's read transaction (inside a write batch: in that one). */
  read<T>(read: () => T): T {
    if (!this.#db.inTransaction) {
      this.#begin.run();
      this.#ending = setImmediate(() => this.end());
    }
    return read();
  }

  /**
   * `PRAGMA data_version` as of this turn's read transaction, read once per transaction: it changes
   * when another connection commits, never for this connection's own commits.
   */
  dataVersion(): number {
    if (this.#version === undefined || this.#ending === undefined) {
      const version: unknown = this.read(() => this.#dataVersion.get());
      this.#version = typeof version === 'number' ? version : -1;
    }
    return this.#version;
  }

  /** Ends the read transaction, if one is open. Call before a write transaction begins. */
  end(): void {
    this.#version = undefined;
    if (this.#ending === undefined) return;
    clearImmediate(this.#ending);
    this.#ending = undefined;
    if (!this.#db.inTransaction) return;
    try {
      this.#commit.run();
    } catch {
      // Ending a read-only transaction cannot lose anything; make sure it is over all the same.
      if (this.#db.inTransaction) this.#db.prepare('ROLLBACK').run();
    }
  }
}
