import type { AgentDirectory } from '../../bus/agent-directory.js';
import type { Bus } from '../../bus/bus.types.js';
import { isMailboxName } from '../../core/names.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { JsonObject, JsonValue } from '../../core/python/json-loads.js';
import { isTruthy, pyStr } from '../../core/python/repr.js';
import { RoundsTeam } from '../../teams/rounds/rounds-team.js';
import type { PhaseChange } from '../../teams/rounds/rounds-state.js';
import { valueOr, type CommandContext, type CommandHandler, type CommandOutcome } from './command-context.js';
import { CommandLocks } from './command-locks.js';
import { ListenScheduler } from './listen-scheduler.js';
import { Liveness } from './liveness.js';
import * as mail from './mail-commands.js';
import { renderItem, type MailItem, type RenderedItem } from './mail-item.js';
import { AddressBook, stringAddress, type KnownAddress, type MailboxAddress } from './mailbox-address.js';
import { AgentSyncMailboxes } from './mailboxes.js';
import { errorReply, okReply, unhashableReply } from './replies.js';
import * as report from './report-commands.js';
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

/** Settings and collaborators of {@link AgentSyncProtocol}. */
export interface AgentSyncProtocolOptions {
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
  /** Where joined agents are recorded as attached through agent_sync (other gateways then hand them their mail). */
  readonly directory?: Pick<AgentDirectory, 'update'>;
}

export type { CommandOutcome } from './command-context.js';

const OK_OUTCOME: CommandOutcome = { kind: 'reply', text: okReply(), reservation: null };
const reply = (text: string): CommandOutcome =>
  text === OK_OUTCOME.text ? OK_OUTCOME : { kind: 'reply', text, reservation: null };

/** What every command's context shares with the others (built once per protocol). */
interface SharedContext extends Omit<CommandContext, 'deliver' | 'announce'> {
  announce(change: PhaseChange, run: CommandRun): Promise<void>;
}

/**
 * One command's context: the shared collaborators, plus delivery that records the mailboxes it
 * touched (their parked listens are served once the command is done). One small object per command.
 */
class CommandRun implements CommandContext {
  readonly #shared: SharedContext;
  /** Mailboxes this command delivered to, in order; undefined until it delivers. */
  touched: MailboxAddress[] | undefined = undefined;

  constructor(shared: SharedContext) {
    this.#shared = shared;
  }

  get team(): RoundsTeam {
    return this.#shared.team;
  }

  get mailboxes(): AgentSyncMailboxes {
    return this.#shared.mailboxes;
  }

  get liveness(): Liveness {
    return this.#shared.liveness;
  }

  get roundLog(): RoundLog {
    return this.#shared.roundLog;
  }

  get clock(): Clock {
    return this.#shared.clock;
  }

  get staleAfterMs(): number {
    return this.#shared.staleAfterMs;
  }

  isWaiting(name: string): boolean {
    return this.#shared.isWaiting(name);
  }

  addressOf(name: string): KnownAddress {
    return this.#shared.addressOf(name);
  }

  touch(name: JsonValue | undefined): void {
    this.#shared.touch(name);
  }

  attached(name: string): Promise<void> {
    return this.#shared.attached(name);
  }

  deliver(targets: readonly MailboxAddress[], item: MailItem, rendered: RenderedItem): Promise<void> {
    const [first] = targets;
    if (targets.length !== 1 || first === undefined) return this.#deliverEach(targets, item, rendered);
    // Recorded first: serving a mailbox whose enqueue failed finds nothing new there, which is harmless.
    (this.touched ??= []).push(first);
    return this.#shared.mailboxes.enqueue(first, item, rendered);
  }

  async #deliverEach(
    targets: readonly MailboxAddress[],
    item: MailItem,
    rendered: RenderedItem,
  ): Promise<void> {
    for (const target of targets) {
      await this.#shared.mailboxes.enqueue(target, item, rendered);
      (this.touched ??= []).push(target);
    }
  }

  announce(change: PhaseChange): Promise<void> {
    return this.#shared.announce(change, this);
  }
}

/**
 * The agent_sync protocol without sockets: runs parsed requests against the rounds team and the
 * mailboxes, each atomic with respect to the others (state commands alone, mailbox commands alongside
 * commands on other mailboxes). State lives in the bus (KV and mailboxes).
 */
export class AgentSyncProtocol {
  readonly #options: AgentSyncProtocolOptions;
  readonly #log: Logger;
  readonly #locks = new CommandLocks();
  readonly #team: RoundsTeam;
  readonly #mailboxes: AgentSyncMailboxes;
  readonly #liveness = new Liveness();
  readonly #listens: ListenScheduler;
  readonly #roundLog: RoundLog;
  /** What every command's context shares (built once: a context is made per command). */
  readonly #shared: SharedContext;
  readonly #addresses = new AddressBook();

  private constructor(options: AgentSyncProtocolOptions) {
    this.#options = options;
    this.#log = options.logger;
    const { bus, clock } = options;
    this.#team = new RoundsTeam({ kv: bus.kv, clock, teamId: options.teamId, members: options.agents });
    this.#mailboxes = new AgentSyncMailboxes({
      bus,
      logger: this.#log,
      prefix: `gateways/agent-sync/${options.teamId}`,
    });
    this.#roundLog = new RoundLog({ cwd: options.cwd, clock });
    this.#listens = new ListenScheduler({
      mailboxes: this.#mailboxes,
      locks: this.#locks,
      clock,
      logger: this.#log,
      touch: (name) => this.#touch(name),
    });
    this.#shared = {
      team: this.#team,
      mailboxes: this.#mailboxes,
      liveness: this.#liveness,
      roundLog: this.#roundLog,
      clock,
      staleAfterMs: options.staleAfterMs,
      isWaiting: (name) => this.#listens.isWaiting(this.#addresses.of(name).address.key),
      addressOf: (name) => this.#addresses.of(name),
      touch: (name) => this.#touch(name),
      attached: (name) => this.#attached(name),
      announce: (change, run) => this.#announce(change, run),
    };
  }

  /**
   * Loads the persisted state. Starts clean when `isFresh`, or when the persisted phase is SHUTDOWN
   * (a finished session). Throws STORE_CORRUPT when persisted state does not validate.
   */
  static async open(options: AgentSyncProtocolOptions): Promise<AgentSyncProtocol> {
    const core = new AgentSyncProtocol(options);
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
  execute(request: JsonObject, signal: AbortSignal): Promise<CommandOutcome> {
    const cmd = request.get('cmd');
    if (cmd === 'listen') {
      const agent = valueOr(request, 'agent', '');
      const known = this.#addresses.lookup(agent);
      if ('unhashable' in known) return Promise.resolve(reply(unhashableReply(known.unhashable)));
      return this.#listens.listen(request, agent, known, signal);
    }
    const handler = typeof cmd === 'string' ? HANDLERS.get(cmd) : undefined;
    if (handler === undefined) {
      return Promise.resolve(reply(errorReply(`Unknown command: ${cmd === undefined ? '' : pyStr(cmd)}`)));
    }
    const keys = typeof cmd === 'string' ? this.#mailboxKeys(cmd, request) : null;
    return this.#run(handler, request, keys);
  }

  /** After a listen reply: commits (written) or releases its reservation. See ListenScheduler.settle. */
  settle(reservation: Reservation, isWritten: boolean): Promise<void> {
    return this.#listens.settle(reservation, isWritten);
  }

  /** Cancels every parked listen and stops the timer. Idempotent. */
  close(): void {
    this.#listens.close();
  }

  /**
   * The mailboxes a command touches when it touches nothing else (send, peek, say to one name), or null
   * for commands that read or change the round state (they run alone).
   */
  #mailboxKeys(cmd: string, request: JsonObject): readonly string[] | null {
    if (cmd === 'peek') return this.#keysOf(valueOr(request, 'agent', ''));
    if (cmd === 'send') return this.#keysOf(valueOr(request, 'to', ''));
    const to = valueOr(request, 'to', '');
    if (cmd === 'say' && isTruthy(to)) return this.#keysOf(to);
    return null;
  }

  #keysOf(v: JsonValue): readonly string[] {
    const known = this.#addresses.lookup(v);
    return 'unhashable' in known ? [] : known.keys;
  }

  /**
   * Runs one command holding its locks (`keys` of the mailboxes it alone touches, or null: it runs
   * alone). The locks are queued for synchronously, in call order, before the first await.
   */
  async #run(
    handler: CommandHandler,
    request: JsonObject,
    keys: readonly string[] | null,
  ): Promise<CommandOutcome> {
    if (!this.#locks.tryHold(keys)) await this.#locks.hold(keys);
    const ctx = new CommandRun(this.#shared);
    try {
      return reply(await handler(request, ctx));
    } catch (err) {
      this.#log.error({ err, cmd: request.get('cmd') }, 'command failed');
      return reply(errorReply(err instanceof Error ? err.message : String(err)));
    } finally {
      const touched = ctx.touched;
      if (touched !== undefined && touched.some((a) => this.#listens.isWaiting(a.key))) {
        await this.#serveTouched(touched);
      }
      this.#locks.release(keys);
    }
  }

  /** Parked listens are served once the command that enqueued has finished its state change. */
  async #serveTouched(touched: readonly MailboxAddress[]): Promise<void> {
    const seen = touched.length > 1 ? new Set<string>() : undefined;
    for (const address of touched) {
      if (seen?.has(address.key) === true) continue;
      seen?.add(address.key);
      if (!this.#listens.isWaiting(address.key)) continue; // nothing parked there: nothing to serve
      await this.#listens
        .serve(address)
        .catch((err: unknown) => this.#log.error({ err }, 'serving listens failed'));
    }
  }

  async #announce(change: PhaseChange, run: CommandRun): Promise<void> {
    const text = `Phase changed: ${change.from} -> ${change.to} (round ${change.round})`;
    const item = { from: '__server__', type: 'phase_change', text, tsMs: this.#options.clock.now() };
    const recipients = change.recipients.map((name) => this.#addresses.of(name).address);
    await run.deliver(recipients, item, renderItem(item));
    const data = { team: this.#options.teamId, from: change.from, to: change.to, round: change.round };
    await this.#options.bus
      .publish({ type: 'team.phase_changed', data })
      .catch((err: unknown) => this.#log.warn({ err }, 'could not publish the phase change'));
  }

  async #attached(name: string): Promise<void> {
    const directory = this.#options.directory;
    // Names that are no bus mailbox have private mailboxes no other gateway can deliver to.
    if (directory === undefined || !isMailboxName(name)) return;
    await directory
      .update(name, { protocol: 'agent-sync', state: 'idle' })
      .catch((err: unknown) => this.#log.warn({ err, agentId: name }, 'agent directory not updated'));
  }

  #touch(name: JsonValue | undefined): void {
    if (typeof name !== 'string') return;
    if (this.#team.state.agents.some((a) => a.name === name)) {
      this.#liveness.touch(name, this.#options.clock.now());
    }
  }
}
