import { watch, type FSWatcher } from 'node:fs';
import { lstatSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { priorityRank, PRIORITIES, type Priority } from '../../core/envelope.js';
import { isMailboxName } from '../../core/names.js';
import type { Timer } from '../../core/clock.js';
import { isQueueAgentDir } from './agent-names.js';
import { handOffFile } from './hand-off.js';
import type { MonitorContext } from './monitor-context.js';
import type { ParsedMime } from './mime/mime-parse.js';
import { nameStamp } from './mime/queue-file-name.js';
import { isDeliverableName } from './ignite-paths.js';
import { readMessageFile } from './queue-file-io.js';
import { takeInName, type IntakeContext } from './queue-intake.js';
import { mirrorEnvelope } from './queue-mirror.js';
import { isCandidateName, listFolderNames, TEMP_NAME } from './queue-names.js';

/** How long a "written completely by an atomic writer" mark stays valid. */
const COMPLETE_MARK_MS = 60_000;

/**
 * Finds new messages in the agents' queue roots (spec/ignite.md 4.2): file-system events on `queue/` and
 * every queue root, plus a rescan every poll interval as the safety net. Only `*.mime` / `*.yaml` names
 * not starting with `.` count; a file modified less than `stableMs` ago waits until it is that old —
 * unless an atomic writer's temp file was seen turning into it (or the monitor wrote it), which proves it
 * complete. Legacy YAML is converted and non-canonical names normalised before the file is mirrored to
 * the bus, in spec order (priority, time in the name, name) within one scan. A bad file (a name that is
 * not UTF-8 or has control characters, a failed rename) is logged once and left where it is; no error
 * of one file stops the others or escapes as an unhandled rejection.
 */
export class QueueDiscovery {
  readonly #ctx: MonitorContext;
  readonly #onAgent: (agent: string) => void;
  readonly #agents = new Set<string>();
  readonly #watchers = new Map<string, FSWatcher>();
  readonly #complete = new Map<string, number>();
  readonly #rechecks = new Map<string, Timer>();
  readonly #busy = new Set<string>();
  readonly #warned = new Set<string>();
  readonly #pending = new Map<string, number>();
  #rescanTimer: Timer | undefined;
  #isClosed = false;

  constructor(options: { readonly ctx: MonitorContext; readonly onAgent: (agent: string) => void }) {
    this.#ctx = options.ctx;
    this.#onAgent = options.onAgent;
  }

  /** The agents found so far. */
  agents(): string[] {
    return [...this.#agents];
  }

  /** Files waiting in `agent`'s queue root at the last scan. */
  pendingCount(agent: string): number {
    return this.#pending.get(agent) ?? 0;
  }

  /** Scans everything once, then watches and rescans every poll interval until closed. */
  async start(): Promise<void> {
    await this.rescan();
    this.#watch('', this.#ctx.paths.queue);
  }

  /** Marks `name` of `agent` as completely written (the monitor wrote it, or saw its temp file renamed). */
  markComplete(agent: string, name: string): void {
    this.#complete.set(`${agent}/${name}`, this.#ctx.clock.now() + COMPLETE_MARK_MS);
  }

  /** Lists `queue/` for agents and scans every queue root. */
  async rescan(): Promise<void> {
    if (this.#isClosed) return;
    this.#rescanTimer?.cancel();
    try {
      const entries = await readdir(this.#ctx.paths.queue, { withFileTypes: true }).catch(() => []);
      for (const e of entries) if (e.isDirectory()) this.#addAgent(e.name);
      await Promise.all([...this.#agents].map((a) => this.#scanLogged(a)));
      const now = this.#ctx.clock.now();
      for (const [key, until] of this.#complete) if (until < now) this.#complete.delete(key);
    } finally {
      if (!this.#isClosed)
        this.#rescanTimer = this.#ctx.clock.setTimer(
          () =>
            void this.rescan().catch((err: unknown) =>
              this.#ctx.logger.error({ err }, 'queue rescan failed'),
            ),
          this.#ctx.settings().pollIntervalMs,
        );
    }
  }

  #addAgent(name: string): void {
    if (this.#agents.has(name) || !isQueueAgentDir(name)) return;
    if (!isMailboxName(name)) {
      if (!this.#warned.has(name))
        this.#ctx.logger.warn({ agent: name }, 'queue folder name cannot be a bus mailbox; ignored');
      this.#warned.add(name);
      return;
    }
    this.#agents.add(name);
    this.#watch(name, this.#ctx.paths.agentRoot(name));
    this.#onAgent(name);
  }

  #watch(agent: string, dir: string): void {
    if (!this.#ctx.settings().isWatching || this.#watchers.has(agent) || this.#isClosed) return;
    try {
      const watcher = watch(dir, { persistent: false }, (_event, file) =>
        this.#onEvent(agent, typeof file === 'string' ? file : null),
      );
      watcher.on('error', () => {
        // The folder went away: drop the watcher; the rescan re-creates it when the folder is back.
        watcher.close();
        this.#watchers.delete(agent);
      });
      this.#watchers.set(agent, watcher);
    } catch (err) {
      this.#ctx.logger.warn({ dir, err }, 'cannot watch folder; relying on the periodic rescan');
    }
  }

  #onEvent(agent: string, file: string | null): void {
    if (this.#isClosed) return;
    if (agent === '') {
      if (file !== null) this.#addAgent(file);
      return;
    }
    if (file === null) return void this.#scanLogged(agent);
    const temp = TEMP_NAME.exec(file)?.[1];
    if (temp !== undefined) return this.markComplete(agent, temp);
    if (isCandidateName(file))
      void this.#ingestBatch(agent, [file]).catch((err: unknown) =>
        this.#ctx.logger.error({ agent, file, err }, 'queue file intake failed'),
      );
  }

  /** {@link scanAgent} for callers that do not wait: a failure is logged, never left unhandled. */
  #scanLogged(agent: string): Promise<void> {
    return this.scanAgent(agent).catch((err: unknown) =>
      this.#ctx.logger.error({ agent, err }, 'queue scan failed; the next rescan tries again'),
    );
  }

  /** Logs a problem of one file (`key` = agent/name) the first time only, not on every rescan. */
  #warnOnce(key: string, fields: Record<string, unknown>, msg: string): void {
    if (!this.#warned.has(`${key}\n${msg}`)) this.#ctx.logger.warn(fields, msg);
    this.#warned.add(`${key}\n${msg}`);
  }

  /** Scans one queue root and ingests what is new. */
  async scanAgent(agent: string): Promise<void> {
    if (!this.#watchers.has(agent)) this.#watch(agent, this.#ctx.paths.agentRoot(agent));
    const listed = await listFolderNames(this.#ctx.paths.agentRoot(agent));
    for (const bytes of listed.undecodable) {
      const file = bytes.toString('utf8'); // U+FFFD for each bad byte: for the log only
      if (isCandidateName(file))
        this.#warnOnce(
          `${agent}/${bytes.toString('hex')}`,
          { agent, file, nameHex: bytes.toString('hex') },
          'queue file name is not valid UTF-8; ignored (rename it to deliver it)',
        );
    }
    const names = listed.names.filter(isCandidateName);
    this.#pending.set(agent, names.length);
    await this.#ingestBatch(
      agent,
      names.filter((n) => !this.#ctx.mirror.has(agent, n)),
    );
  }

  async #ingestBatch(agent: string, names: readonly string[]): Promise<void> {
    const ready: Array<{ name: string; rank: number; stamp: bigint }> = [];
    const loaded = new Map<string, Awaited<ReturnType<typeof readMessageFile>>>();
    for (const original of names) {
      const key = `${agent}/${original}`;
      if (this.#busy.has(key) || this.#ctx.mirror.has(agent, original)) continue;
      this.#busy.add(key);
      try {
        const name = await this.#prepare(agent, original);
        if (name === null || this.#ctx.mirror.has(agent, name)) continue;
        const file = await readMessageFile(`${this.#ctx.paths.agentRoot(agent)}/${name}`).catch(() => null);
        if (file === null) continue;
        loaded.set(name, file);
        const priority = file.message.headers.get('X-IGNITE-Priority') ?? 'normal';
        const known = PRIORITIES.find((p): p is Priority => p === priority) ?? 'normal';
        ready.push({ name, rank: priorityRank(known), stamp: nameStamp(name) ?? 0n });
      } catch (err) {
        this.#warnOnce(key, { agent, file: original, err }, 'cannot take in queue file; left in place');
      } finally {
        this.#busy.delete(key);
      }
    }
    ready.sort(
      (a, b) =>
        a.rank - b.rank ||
        (a.stamp < b.stamp ? -1 : a.stamp > b.stamp ? 1 : 0) ||
        (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
    );
    const isElsewhere = ready.length > 0 && (await this.#ctx.isAttachedElsewhere(agent));
    for (const { name } of ready) {
      const file = loaded.get(name);
      if (file === undefined || this.#isClosed) continue;
      try {
        await this.#send(agent, name, file.message, isElsewhere);
      } catch (err) {
        // The bus refused it (or is down): logged; the file stays and the next rescan tries again.
        this.#ctx.logger.error({ agent, file: name, err }, 'cannot queue the file on the bus; left in place');
      }
    }
  }

  /** Mirrors one taken-in file to the agent's mailbox (or hands it off when the agent is elsewhere). */
  async #send(agent: string, name: string, message: ParsedMime, isElsewhere: boolean): Promise<void> {
    if (isElsewhere) {
      await this.#ctx.lane(agent, () => handOffFile(this.#ctx, agent, { name, message, where: 'root' }));
      return;
    }
    const envelope = mirrorEnvelope(agent, name, message, this.#ctx.clock.now());
    await this.#ctx.mirror.add({ ...envelope, to: agent }, name);
    this.#complete.delete(`${agent}/${name}`);
    this.#ctx.publish('queued', {
      agent,
      file: name,
      priority: envelope.priority ?? 'normal',
      type: envelope.type,
    });
  }

  /** Stability check, legacy conversion and name normalisation; resolves the canonical name or null. */
  async #prepare(agent: string, name: string): Promise<string | null> {
    const root = this.#ctx.paths.agentRoot(agent);
    if (!isDeliverableName(name)) {
      // Never renamed (the new name would fail the canonical check again) and never mirrored (an
      // envelope header value must be one line): logged once and left for a human to rename.
      this.#warnOnce(
        `${agent}/${name}`,
        { agent, file: name },
        'queue file name has control characters or a backslash; ignored (rename it to deliver it)',
      );
      return null;
    }
    let info: ReturnType<typeof lstatSync>;
    try {
      info = lstatSync(`${root}/${name}`, { throwIfNoEntry: false });
    } catch {
      // Unreadable entry (permissions): treated like a vanished one; the next rescan tries again.
      return null;
    }
    if (info === undefined) return null;
    if (!info.isFile()) {
      this.#warnOnce(`${agent}/${name}`, { agent, file: name }, 'not a regular file; ignored');
      return null;
    }
    const key = `${agent}/${name}`;
    const ageMs = this.#ctx.clock.now() - info.mtimeMs;
    const stableMs = this.#ctx.settings().stableMs;
    if (ageMs < stableMs && !this.#complete.has(key)) {
      // One re-scan per agent (not one per file), so files that settle together are ordered together.
      const existing = this.#rechecks.get(agent);
      if (existing === undefined) {
        this.#rechecks.set(
          agent,
          this.#ctx.clock.setTimer(
            () => {
              this.#rechecks.delete(agent);
              void this.#scanLogged(agent);
            },
            stableMs - ageMs + 5,
          ),
        );
      }
      return null;
    }
    const intake: IntakeContext = {
      logger: this.#ctx.logger,
      pid: this.#ctx.pid,
      now: () => this.#ctx.preciseNow(),
      warn: (file, fields, msg) => this.#warnOnce(`${agent}/${file}`, { agent, file, ...fields }, msg),
    };
    return takeInName(root, name, intake);
  }

  /** Stops watching and rescanning. Idempotent. */
  close(): void {
    this.#isClosed = true;
    this.#rescanTimer?.cancel();
    for (const t of this.#rechecks.values()) t.cancel();
    this.#rechecks.clear();
    for (const w of this.#watchers.values()) w.close();
    this.#watchers.clear();
  }
}
