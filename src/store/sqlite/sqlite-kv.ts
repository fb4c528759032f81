import type Database from 'better-sqlite3';
import type { LogBatch } from '../follow-log.js';
import { checkRevision, kvValueText } from '../kv-write.js';
import type { KvChange, KvEntry, KvWriteOptions } from '../store.js';
import { kvLogRow, kvRevisionRow, kvValueRow, parseJson, parseRow } from './sqlite-rows.js';

const PRUNE_EVERY = 1_000;
const WATCH_BATCH = 100;

/**
 * The key-value space in SQLite. `kv` holds current values; `kv_log` gives every change (put or delete)
 * its revision (a rowid: strictly increasing across the whole KV space and, as the log is only pruned
 * from its oldest end, never reused) and is
 * what watches read, so watchers in other processes see the same changes. The log keeps the newest
 * `retention` changes. Write methods must run inside an IMMEDIATE transaction (the caller's).
 */
export class SqliteKv {
  readonly #get: Database.Statement<[string]>;
  readonly #list: Database.Statement<[string, string]>;
  readonly #listAll: Database.Statement<[]>;
  readonly #upsert: Database.Statement<[string, string, number]>;
  readonly #delete: Database.Statement<[string]>;
  readonly #log: Database.Statement<[string, string, string | null]>;
  readonly #revision: Database.Statement<[]>;
  readonly #changes: Database.Statement<{ after: number; upTo: number; prefix: string; limit: number }>;
  readonly #prune: Database.Statement<[number]>;
  readonly #retention: number;
  #sincePrune = 0;

  constructor(db: Database.Database, options: { retention: number }) {
    this.#retention = options.retention;
    this.#get = db.prepare('SELECT key, value, revision FROM kv WHERE key = ?');
    this.#list = db.prepare('SELECT key, value, revision FROM kv WHERE key >= ? AND key < ? ORDER BY key');
    this.#listAll = db.prepare('SELECT key, value, revision FROM kv ORDER BY key');
    this.#upsert = db.prepare(
      'INSERT INTO kv (key, value, revision) VALUES (?, ?, ?) ' +
        'ON CONFLICT (key) DO UPDATE SET value = excluded.value, revision = excluded.revision',
    );
    this.#delete = db.prepare('DELETE FROM kv WHERE key = ?');
    this.#log = db.prepare('INSERT INTO kv_log (key, op, value) VALUES (?, ?, ?)');
    this.#revision = db.prepare('SELECT COALESCE(MAX(revision), 0) AS revision FROM kv_log');
    this.#changes = db.prepare(
      'SELECT revision, key, op, value FROM kv_log WHERE revision > @after AND revision <= @upTo ' +
        'AND substr(key, 1, length(@prefix)) = @prefix ORDER BY revision LIMIT @limit',
    );
    this.#prune = db.prepare('DELETE FROM kv_log WHERE revision <= (SELECT MAX(revision) FROM kv_log) - ?');
  }

  get(key: string): KvEntry | null {
    const row = this.#get.get(key);
    return row === undefined ? null : toEntry(row);
  }

  /** Call inside a write transaction. */
  set(key: string, value: unknown, options: KvWriteOptions | undefined): KvEntry {
    const text = kvValueText(value);
    checkRevision(key, this.#currentRevision(key), options);
    const revision = this.#append(key, 'put', text);
    this.#upsert.run(key, text, revision);
    return { key, value: parseJson(text, `kv ${key}`), revision };
  }

  /** Call inside a write transaction. Resolves whether a key was deleted. */
  delete(key: string, options: KvWriteOptions | undefined): boolean {
    const current = this.#currentRevision(key);
    checkRevision(key, current, options);
    if (current === undefined) return false;
    this.#append(key, 'delete', null);
    this.#delete.run(key);
    return true;
  }

  list(prefix: string): KvEntry[] {
    const end = prefixEnd(prefix);
    const rows = end === null ? this.#listAll.all() : this.#list.all(prefix, end);
    return rows.map(toEntry).filter((entry) => entry.key.startsWith(prefix));
  }

  /** The newest revision in the KV space (0 when nothing was ever written). */
  revision(): number {
    return parseRow(kvRevisionRow, this.#revision.get(), 'kv_log').revision;
  }

  /** Changes under `prefix` after `after`, as a bounded batch for watchers. */
  changesAfter(prefix: string, after: number): LogBatch<KvChange> {
    const upTo = this.revision();
    const rows = this.#changes.all({ after, upTo, prefix, limit: WATCH_BATCH });
    const items = rows.map((row): KvChange => {
      const change = parseRow(kvLogRow, row, 'kv_log');
      const where = `kv_log ${change.revision}`;
      const value = change.value === null ? undefined : parseJson(change.value, where);
      return { op: change.op, key: change.key, value, revision: change.revision };
    });
    return { items, cursor: items.length === WATCH_BATCH ? (items.at(-1)?.revision ?? upTo) : upTo };
  }

  #currentRevision(key: string): number | undefined {
    const row = this.#get.get(key);
    return row === undefined ? undefined : parseRow(kvValueRow, row, `kv ${key}`).revision;
  }

  #append(key: string, op: KvChange['op'], text: string | null): number {
    const revision = Number(this.#log.run(key, op, text).lastInsertRowid);
    if (++this.#sincePrune >= PRUNE_EVERY) {
      this.#sincePrune = 0;
      this.#prune.run(this.#retention);
    }
    return revision;
  }
}

function toEntry(row: unknown): KvEntry {
  const { key, value, revision } = parseRow(kvValueRow, row, 'kv');
  return { key, value: parseJson(value, `kv ${key}`), revision };
}

/**
 * The smallest string above every string starting with `prefix`, or null when the last character is
 * not a plain BMP one (then the caller scans and filters). SQLite compares TEXT bytewise and UTF-8 byte
 * order is code point order, so bumping the last character gives the bound.
 */
function prefixEnd(prefix: string): string | null {
  const last = prefix.charCodeAt(prefix.length - 1);
  if (Number.isNaN(last) || last >= 0xd7ff) return null;
  return prefix.slice(0, -1) + String.fromCharCode(last + 1);
}
