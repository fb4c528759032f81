import type Database from 'better-sqlite3';
import { z } from 'zod';
import { MusubiError } from '../../core/errors.js';

/**
 * Message rows move between states:
 * - 0 ready: claimable now;
 * - 1 waiting: leased (`is_leased` = 1) or delayed until `available_at`, found through `messages_waiting`
 *   by time. A claim first moves every waiting row whose time has come back to ready;
 * - 2 dead: a dead letter (`dead_reason`, `dead_at`); still holds its (mailbox, id), so a re-send of a
 *   dead-lettered id is a duplicate until the letter is requeued or discarded;
 * - 3 quarantined: its stored envelope failed validation; kept for inspection, never handed out.
 *
 * Since version 3 the messages table is clustered by (mailbox, state, priority, seq): the ready rows of
 * a mailbox lie together in delivery order, so a claim or a peek reads them straight off the table, and
 * a send or a take touches the table and one index (`messages_key`). A row's envelope is the JSON of its
 * `message.sent` event (kind 1, see EventKind) at cursor `seq`, unless the row holds it in `envelope`
 * itself (bodies longer than the sent event keeps, rows written before version 3, requeued dead letters,
 * whose `seq` is the cursor of their `message.requeued` event).
 *
 * No table uses AUTOINCREMENT (it costs a write to sqlite_sequence in every transaction). `events.cursor`
 * and `kv_log.revision` are rowids, and those logs are only ever pruned from the oldest end, so the newest
 * row stays and rowid allocation (max + 1) never hands out a committed number twice (a rolled-back insert
 * frees its number, which nothing outside that transaction saw). `messages.seq` is the cursor of the event
 * that put the message there (`message.sent` or `message.requeued`), so it strictly increases and is never
 * reused either. Pruning keeps the events that hold the envelope of a message still in the table.
 */
export const MessageRowState = { ready: 0, waiting: 1, dead: 2, quarantined: 3 } as const;

const V1 = `
CREATE TABLE messages (
  seq INTEGER PRIMARY KEY,
  mailbox TEXT NOT NULL,
  id TEXT NOT NULL,
  priority INTEGER NOT NULL,
  envelope TEXT NOT NULL,
  attempt INTEGER NOT NULL DEFAULT 0,
  state INTEGER NOT NULL DEFAULT 0,
  is_leased INTEGER NOT NULL DEFAULT 0,
  available_at INTEGER NOT NULL,
  dead_reason TEXT,
  dead_at INTEGER,
  UNIQUE (mailbox, id)
);
CREATE INDEX messages_ready ON messages (mailbox, priority, seq) WHERE state = 0;
CREATE INDEX messages_waiting ON messages (mailbox, available_at) WHERE state = 1;
CREATE INDEX messages_dead ON messages (dead_at, seq) WHERE state = 2;
CREATE INDEX messages_dead_id ON messages (id) WHERE state = 2;

CREATE TABLE kv (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL,
  revision INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE kv_log (
  revision INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  op TEXT NOT NULL CHECK (op IN ('put', 'delete')),
  value TEXT
);

CREATE TABLE events (
  cursor INTEGER PRIMARY KEY,
  at INTEGER NOT NULL,
  event TEXT NOT NULL
);
`;

/**
 * Version 2: peek reads live messages in delivery order from an index instead of sorting the
 * mailbox on every call (`messages_ready` alone skips leased and delayed rows, which peek shows).
 */
const V2 = `CREATE INDEX messages_live ON messages (mailbox, priority, seq) WHERE state IN (0, 1);`;

/**
 * Version 3 (issue #20, the hot path): messages clustered by (mailbox, state, priority, seq) with one
 * unique index for (mailbox, id) — a send and a take now touch two b-trees instead of four — and the
 * envelope kept once, in its `message.sent` event, instead of in the row and again in the event. Message
 * events carry their fields in columns (`kind`, `mailbox`, `message_id`, `n1`, `n2`) instead of JSON; older
 * rows keep kind 0 (JSON in `event`). Rows move over with their envelopes in `envelope`.
 */
const V3 = `
CREATE TABLE messages_v3 (
  mailbox TEXT NOT NULL,
  state INTEGER NOT NULL,
  priority INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  id TEXT NOT NULL,
  attempt INTEGER NOT NULL DEFAULT 0,
  is_leased INTEGER NOT NULL DEFAULT 0,
  available_at INTEGER NOT NULL,
  dead_reason TEXT,
  dead_at INTEGER,
  envelope TEXT,
  PRIMARY KEY (mailbox, state, priority, seq)
) WITHOUT ROWID;
INSERT INTO messages_v3 (mailbox, state, priority, seq, id, attempt, is_leased, available_at, dead_reason, dead_at, envelope)
  SELECT mailbox, state, priority, seq, id, attempt, is_leased, available_at, dead_reason, dead_at, envelope FROM messages;
DROP TABLE messages;
ALTER TABLE messages_v3 RENAME TO messages;
CREATE UNIQUE INDEX messages_key ON messages (mailbox, id);
CREATE INDEX messages_waiting ON messages (mailbox, available_at) WHERE state = 1;
CREATE INDEX messages_dead ON messages (dead_at, seq) WHERE state = 2;
CREATE INDEX messages_dead_id ON messages (id) WHERE state = 2;
ALTER TABLE events ADD COLUMN kind INTEGER NOT NULL DEFAULT 0;
ALTER TABLE events ADD COLUMN mailbox TEXT;
ALTER TABLE events ADD COLUMN message_id TEXT;
ALTER TABLE events ADD COLUMN n1 INTEGER;
ALTER TABLE events ADD COLUMN n2 INTEGER;
`;

/** Migration n moves a database from schema version n to n + 1 (PRAGMA user_version). */
const MIGRATIONS: readonly ((db: Database.Database) => void)[] = [
  (db) => db.exec(V1),
  (db) => db.exec(V2),
  (db) => db.exec(V3),
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the schema up to {@link SCHEMA_VERSION} in one IMMEDIATE transaction, so two processes
 * opening a new file at once migrate it once. Throws STORE_UNAVAILABLE for a file written by a newer
 * musubi (its schema is unknown here, so nothing is touched).
 */
export function migrate(db: Database.Database, path: string): void {
  db.transaction(() => {
    const version = z
      .number()
      .int()
      .nonnegative()
      .parse(db.pragma('user_version', { simple: true }));
    if (version > SCHEMA_VERSION) {
      throw new MusubiError(
        'STORE_UNAVAILABLE',
        `SQLite store ${path} has schema version ${version}, newer than this musubi supports (${SCHEMA_VERSION}); upgrade musubi`,
        { details: { path, version, supported: SCHEMA_VERSION } },
      );
    }
    for (let v = version; v < SCHEMA_VERSION; v++) MIGRATIONS[v]?.(db);
    if (version !== SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
