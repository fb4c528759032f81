import type { Bus } from '../../bus/bus.types.js';
import type { Clock, Timer } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { RoundsTeam } from '../../teams/rounds/rounds-team.js';
import type { PhaseChange } from '../../teams/rounds/rounds-state.js';
import type { CommandContext, CommandHandler } from './command-context.js';
import { CommandQueue } from './command-queue.js';
import type { JsonObject, JsonValue } from './json-value.js';
import { listenReply, listenTimeoutMs } from './listen-replies.js';
import { ListenWaiters, type WaitResult, type Waiter } from './listen-waiters.js';
import { Liveness } from './liveness.js';
import * as mail from './mail-commands.js';
import { renderItem } from './mail-item.js';
import { mailboxAddress, stringAddress, type MailboxAddress } from './mailbox-address.js';
import { AgentSyncMailboxes } from './mailboxes.js';
import { pyStr } from './py-render.js';
import { errorReply, unhashableReply } from './replies.js';
import * as report from './report-commands.js';
import { valueOr } from './request-values.js';
import type { Reservation } from './reservation.js';
import { RoundLog } from './round-log.js';
import * as rounds from './round-commands.js';

const HANDLERS: ReadonlyMap<string, CommandHandler> = new Map([
  ['join', rounds.join],
  ['status', report.status],
  ['peek', mail.peek],
  ['send', mail.send],
  ['broadcast', mail.broadcast],
  ['impl-done', rounds.implDone],
  ['test-result', rounds.testResult],
  ['discuss', rounds.discuss],
  ['discuss-done', rounds.discussDone],
  ['get-discussion', report.getDiscussion],
  ['say', mail.say],
  ['write-log', rounds.writeLog],
  ['set-phase', rounds.setPhase],
  ['shutdown', rounds.shutdown],
  ['heartbeat', rounds.heartbeat],
]);

/** Settings and collaborators of {@link AgentSyncCore}. */
export interface AgentSyncCoreOptions {
  readonly bus: Bus;
  readonly logger: Logger;
  readonly clock: Clock;
  /** AGENTS_LIST: order and duplicates kept. */
  readonly agents: readonly string[];
  /** Working directory the round logs (`logs/v6/`) are written under. */
  readonly cwd: string;
  /** KV namespace of this gateway's state (`teams/rounds/<teamId>/`, `gateways/agent-sync/<teamId>/`). */
  readonly teamId: string;
  readonly staleAfterMs: number;
  /** Discard the persisted state (and the agents' mailboxes) at start. */
  readonly isFresh: boolean;
  /** How often parked listens look for mail other gateways put into their bus mailbox. */
  readonly foreignCheckMs: number;
}

/** What a command produced: a reply line (to commit `reservation` after writing it), or nothing. */
export type CommandOutcome =
  | { readonly kind: 'reply'; readonly text: string; readonly reservation: Reservation | null }
  | { readonly kind: 'cancelled' };

type ListenStart = CommandOutcome | { readonly kind: 'wait'; readonly result: Promise<WaitResult> };

const reply = (text: string): CommandOutcome => ({ kind: 'reply', text, reservation: null });

/**
 * The agent_sync protocol without sockets: runs parsed requests one at a time against the rounds team
 * and the mailboxes, parks listens and serves them FIFO. State lives in the bus (KV and mailboxes).
 */
export class AgentSyncCore {
  readonly #options: AgentSyncCoreOptions;
  readonly #log: Logger;
  readonly #queue = new CommandQueue();
  readonly #team: RoundsTeam;
  readonly #mailboxes: AgentSyncMailboxes;
  readonly #waiters = new ListenWaiters();
  readonly #liveness = new Liveness();
  readonly #ctx: CommandContext;
  #touched: MailboxAddress[] = [];
  #foreignTimer: Timer | undefined;
  #isClosed = false;

  private constructor(options: AgentSyncCoreOptions) {
    this.#options = options;
    this.#log = options.logger;
    const { bus, clock } = options;
    this.#team = new RoundsTeam({ kv: bus.kv, clock, teamId: options.teamId, members: options.agents });
    this.#mailboxes = new AgentSyncMailboxes({
      bus,
      logger: this.#log,
      prefix: `gateways/agent-sync/${options.teamId}`,
    });
    this.#ctx = {
      team: this.#team,
      mailboxes: this.#mailboxes,
      liveness: this.#liveness,
      roundLog: new RoundLog({ cwd: options.cwd, clock }),
      clock,
      staleAfterMs: options.staleAfterMs,
      isWaiting: (name) => this.#waiters.has(stringAddress(name).key),
      touch: (name) => this.#touch(name),
      deliver: (targets, item, rendered) => this.#deliver(targets, item, rendered),
      announce: (change) => this.#announce(change),
    };
  }

  /**
   * Loads the persisted state. Starts clean when `isFresh`, or when the persisted phase is SHUTDOWN
   * (a finished session). Throws STORE_CORRUPT when persisted state does not validate.
   */
  static async open(options: AgentSyncCoreOptions): Promise<AgentSyncCore> {
    const core = new AgentSyncCore(options);
    await core.#load();
    return core;
  }

  async #load(): Promise<void> {
    await this.#mailboxes.load();
    const state = await this.#team.load();
    if (!this.#options.isFresh && state.phase !== 'SHUTDOWN') return;
    if (!this.#options.isFresh) this.#log.info('persisted phase is SHUTDOWN: starting a new session');
    const names = new Set([...this.#options.agents, ...state.agents.map((a) => a.name)]);
    const busNames = [...names].map(stringAddress).flatMap((a) => (a.kind === 'bus' ? [a.mailbox] : []));
    await this.#team.reset();
    await this.#mailboxes.clear(busNames);
    this.#liveness.clear();
  }

  /**
   * Runs one request. `signal` aborts when the connection ends or fails: a parked listen is then
   * cancelled without dequeuing anything. Never rejects for request problems (they become error replies).
   */
  async execute(request: JsonObject, signal: AbortSignal): Promise<CommandOutcome> {
    const cmd = request.get('cmd');
    if (cmd === 'listen') return this.#listen(request, signal);
    const handler = typeof cmd === 'string' ? HANDLERS.get(cmd) : undefined;
    if (handler === undefined) {
      return reply(errorReply(`Unknown command: ${cmd === undefined ? '' : pyStr(cmd)}`));
    }
    return this.#queue.run(async () => {
      this.#touched = [];
      try {
        return reply(await handler(request, this.#ctx));
      } catch (err) {
        this.#log.error({ err, cmd }, 'command failed');
        return reply(errorReply(err instanceof Error ? err.message : String(err)));
      } finally {
        await this.#serveTouched();
      }
    });
  }

  /**
   * After a listen reply: removes its messages when the reply was written, else puts them back. Queued
   * synchronously, so requests arriving later see the removal.
   */
  settle(reservation: Reservation, isWritten: boolean): Promise<void> {
    return this.#queue
      .run(() => (isWritten ? reservation.commit() : reservation.release()))
      .catch((err: unknown) => this.#log.error({ err }, 'could not settle a listen reservation'));
  }

  /** Cancels every parked listen and stops the timer. Idempotent. */
  close(): void {
    this.#isClosed = true;
    this.#foreignTimer?.cancel();
    this.#foreignTimer = undefined;
    this.#waiters.cancelAll();
  }

  async #listen(request: JsonObject, signal: AbortSignal): Promise<CommandOutcome> {
    const agent = valueOr(request, 'agent', '');
    const start = await this.#queue.run(() => this.#listenStart(request, agent, signal));
    if (start.kind !== 'wait') return start;
    const result = await start.result;
    if (result.kind === 'cancelled') return result;
    this.#touch(agent);
    const items = result.reservation?.items ?? [];
    return { kind: 'reply', text: listenReply(items, result.isTimeout), reservation: result.reservation };
  }

  async #listenStart(request: JsonObject, agent: JsonValue, signal: AbortSignal): Promise<ListenStart> {
    const address = mailboxAddress(agent);
    if ('unhashable' in address) return reply(unhashableReply(address.unhashable));
    this.#touch(agent);
    if (this.#waiters.has(address.key)) await this.#serve(address);
    const reservation = await this.#mailboxes.reserve(address);
    if (reservation !== null) return { kind: 'reply', text: listenReply(reservation.items), reservation };
    const timeout = listenTimeoutMs(request.get('timeout'));
    if ('error' in timeout) return reply(errorReply(timeout.error));
    if (timeout.ms <= 0) return reply(listenReply([], true));
    if (signal.aborted || this.#isClosed) return { kind: 'cancelled' };
    const { waiter, result } = this.#waiters.park(address);
    if (timeout.ms !== Infinity) {
      waiter.timer = this.#options.clock.setTimer(() => void this.#expire(waiter), timeout.ms);
    }
    const onAbort = (): void => waiter.settle({ kind: 'cancelled' });
    signal.addEventListener('abort', onAbort, { once: true });
    void result.then(() => signal.removeEventListener('abort', onAbort));
    this.#armForeignCheck();
    return { kind: 'wait', result };
  }

  /** A listen's timeout: it takes whatever is unreserved at this instant. */
  #expire(waiter: Waiter): Promise<void> {
    return this.#queue.run(async () => {
      if (!this.#waiters.isParked(waiter)) return;
      const reservation = await this.#mailboxes.reserve(waiter.address);
      if (!this.#waiters.isParked(waiter)) {
        await reservation?.release();
        return;
      }
      waiter.settle({ kind: 'done', reservation, isTimeout: reservation === null });
    });
  }

  /** Hands queued mail to the oldest parked listens of `address`, while there is mail to hand out. */
  async #serve(address: MailboxAddress): Promise<void> {
    while (this.#waiters.has(address.key)) {
      const reservation = await this.#mailboxes.reserve(address);
      if (reservation === null) return;
      const waiter = this.#waiters.oldest(address.key);
      if (waiter === undefined) {
        await reservation.release();
        return;
      }
      waiter.settle({ kind: 'done', reservation, isTimeout: false });
    }
  }

  async #serveTouched(): Promise<void> {
    const seen = new Set<string>();
    for (const address of this.#touched) {
      if (seen.has(address.key)) continue;
      seen.add(address.key);
      await this.#serve(address).catch((err: unknown) => this.#log.error({ err }, 'serving listens failed'));
    }
    this.#touched = [];
  }

  /** While listens are parked, periodically serves them mail that arrived from other gateways. */
  #armForeignCheck(): void {
    if (this.#foreignTimer !== undefined || this.#isClosed) return;
    this.#foreignTimer = this.#options.clock.setTimer(() => {
      this.#foreignTimer = undefined;
      void this.#queue
        .run(async () => {
          const waited = this.#waiters.addresses().filter((a) => a.kind === 'bus');
          if (waited.length === 0) return;
          const withMail = await this.#mailboxes.busMailboxesWithMail();
          for (const address of waited) {
            if (address.kind === 'bus' && withMail.has(address.mailbox)) await this.#serve(address);
          }
        })
        .catch((err: unknown) => this.#log.error({ err }, 'foreign mail check failed'))
        .finally(() => {
          if (this.#waiters.addresses().length > 0) this.#armForeignCheck();
        });
    }, this.#options.foreignCheckMs);
  }

  async #deliver(
    targets: readonly MailboxAddress[],
    item: Parameters<CommandContext['deliver']>[1],
    rendered: Parameters<CommandContext['deliver']>[2],
  ): Promise<void> {
    for (const target of targets) {
      await this.#mailboxes.enqueue(target, item, rendered);
      this.#touched.push(target);
    }
  }

  async #announce(change: PhaseChange): Promise<void> {
    const text = `Phase changed: ${change.from} -> ${change.to} (round ${change.round})`;
    const item = { from: '__server__', type: 'phase_change', text, tsMs: this.#options.clock.now() };
    await this.#deliver(change.recipients.map(stringAddress), item, renderItem(item));
    const data = { team: this.#options.teamId, from: change.from, to: change.to, round: change.round };
    await this.#options.bus
      .publish({ type: 'team.phase_changed', data })
      .catch((err: unknown) => this.#log.warn({ err }, 'could not publish the phase change'));
  }

  #touch(name: JsonValue | undefined): void {
    if (typeof name !== 'string') return;
    if (this.#team.state.agents.some((a) => a.name === name)) {
      this.#liveness.touch(name, this.#options.clock.now());
    }
  }
}
