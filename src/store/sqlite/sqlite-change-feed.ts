import type Database from 'better-sqlite3';
import { AvailableListeners, type AvailableListener } from '../available-listeners.js';
import { ChangeSignal } from '../change-signal.js';
import { KvWakeups } from '../kv-wakeups.js';
import { DataVersionPoller } from './data-version-poller.js';

/**
 * Who hears about changes to one SQLite store: onAvailable listeners and the wake-ups of kv watches
 * and event follows. Writes in this connection announce themselves directly after commit; commits by
 * other connections are noticed by a `PRAGMA data_version` poll that runs only while someone listens.
 */
export class SqliteChangeFeed {
  /** Wakes kv watches, by key. */
  readonly kv = new KvWakeups();
  /** Wakes event follows. */
  readonly events = new ChangeSignal();
  readonly #listeners = new AvailableListeners();
  readonly #poller: DataVersionPoller;

  constructor(db: Database.Database, options: { pollIntervalMs: number }) {
    const dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.#poller = new DataVersionPoller({
      intervalMs: options.pollIntervalMs,
      read: () => {
        const version: unknown = dataVersion.get();
        return typeof version === 'number' ? version : -1;
      },
      // Another connection committed something: it may be anything, anywhere.
      onChange: () => {
        this.#listeners.notify(null);
        this.kv.wakeAll();
        this.events.notify();
      },
    });
  }

  /** Subscribes an onAvailable listener (and polls while it is subscribed); returns the unsubscribe. */
  subscribe(listener: AvailableListener): () => void {
    const remove = this.#listeners.add(listener);
    const release = this.#poller.hold();
    return () => {
      remove();
      release();
    };
  }

  /** Keeps the poll running for a watch or follow; returns the release. */
  hold(): () => void {
    return this.#poller.hold();
  }

  /** After a commit in this connection that may make messages of `mailbox` claimable. */
  messagesAvailable(mailbox: string): void {
    this.#listeners.notify(mailbox);
    this.events.notify();
  }

  /** Stops polling, drops listeners and wakes watchers so they notice the close. */
  close(): void {
    this.#poller.close();
    this.#listeners.clear();
    this.kv.wakeAll();
    this.events.notify();
  }
}
