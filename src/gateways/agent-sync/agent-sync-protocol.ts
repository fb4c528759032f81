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
import { mailboxAddress, stringAddress, type MailboxAddress } from './mailbox-address.js';
import { AgentSyncMailboxes } from './mailboxes.js';
import { errorReply, unhashableReply } from './replies.js';
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

const reply = (text: string): CommandOutcome => ({ kind: 'reply', text, reservation: null });

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
  readonly #shared: Omit<CommandContext, 'deliver' | 'announce'>;

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
      isWaiting: (name) => this.#listens.isWaiting(stringAddress(name).key),
      touch: (name) => this.#touch(name),
      attached: (name) => this.#attached(name),
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
  async execute(request: JsonObject, signal: AbortSignal): Promise<CommandOutcome> {
    const cmd = request.get('cmd');
    if (cmd === 'listen') {
      const agent = valueOr(request, 'agent', '');
      const address = mailboxAddress(agent);
      if ('unhashable' in address) return reply(unhashableReply(address.unhashable));
      return this.#listens.listen(request, agent, address, signal);
    }
    const handler = typeof cmd === 'string' ? HANDLERS.get(cmd) : undefined;
    if (handler === undefined) {
      return reply(errorReply(`Unknown command: ${cmd === undefined ? '' : pyStr(cmd)}`));
    }
    const keys = typeof cmd === 'string' ? this.#mailboxKeys(cmd, request) : null;
    const run = (): Promise<CommandOutcome> => this.#run(handler, request, cmd);
    return keys === null ? this.#locks.exclusive(run) : this.#locks.mailboxes(keys, run);
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
  #mailboxKeys(cmd: string, request: JsonObject): string[] | null {
    const keyOf = (v: JsonValue): string[] => {
      const address = mailboxAddress(v);
      return 'unhashable' in address ? [] : [address.key];
    };
    if (cmd === 'peek') return keyOf(valueOr(request, 'agent', ''));
    if (cmd === 'send') return keyOf(valueOr(request, 'to', ''));
    const to = valueOr(request, 'to', '');
    if (cmd === 'say' && isTruthy(to)) return keyOf(to);
    return null;
  }

  async #run(
    handler: CommandHandler,
    request: JsonObject,
    cmd: JsonValue | undefined,
  ): Promise<CommandOutcome> {
    const touched: MailboxAddress[] = [];
    const ctx = this.#context(touched);
    try {
      return reply(await handler(request, ctx));
    } catch (err) {
      this.#log.error({ err, cmd }, 'command failed');
      return reply(errorReply(err instanceof Error ? err.message : String(err)));
    } finally {
      // Parked listens are served once the command that enqueued has finished its state change.
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
  }

  /** A command's context: the shared collaborators, plus delivery that records what it touched. */
  #context(touched: MailboxAddress[]): CommandContext {
    const deliver = async (
      targets: readonly MailboxAddress[],
      item: MailItem,
      rendered: RenderedItem,
    ): Promise<void> => {
      for (const target of targets) {
        await this.#mailboxes.enqueue(target, item, rendered);
        touched.push(target);
      }
    };
    const shared = this.#shared;
    return {
      team: shared.team,
      mailboxes: shared.mailboxes,
      liveness: shared.liveness,
      roundLog: shared.roundLog,
      clock: shared.clock,
      staleAfterMs: shared.staleAfterMs,
      isWaiting: shared.isWaiting,
      touch: shared.touch,
      attached: shared.attached,
      deliver,
      announce: (change) => this.#announce(change, deliver),
    };
  }

  async #announce(change: PhaseChange, deliver: CommandContext['deliver']): Promise<void> {
    const text = `Phase changed: ${change.from} -> ${change.to} (round ${change.round})`;
    const item = { from: '__server__', type: 'phase_change', text, tsMs: this.#options.clock.now() };
    await deliver(change.recipients.map(stringAddress), item, renderItem(item));
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
