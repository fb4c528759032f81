import type { Clock } from '../../core/clock.js';
import type { JsonObject, JsonValue } from '../../core/python/json-loads.js';
import type { RoundsTeam } from '../../teams/rounds/rounds-team.js';
import type { PhaseChange } from '../../teams/rounds/rounds-state.js';
import type { Liveness } from './liveness.js';
import type { KnownAddress, MailboxAddress } from './mailbox-address.js';
import type { AgentSyncMailboxes } from './mailboxes.js';
import type { MailItem, RenderedItem } from './mail-item.js';
import type { Reservation } from './reservation.js';
import type { RoundLog } from './round-log.js';

/** What a command handler works with. Handlers run one at a time (inside the command queue). */
export interface CommandContext {
  readonly team: RoundsTeam;
  readonly mailboxes: AgentSyncMailboxes;
  readonly liveness: Liveness;
  readonly roundLog: RoundLog;
  readonly clock: Clock;
  readonly staleAfterMs: number;
  /** True while a listen waits for `name`. */
  isWaiting(name: string): boolean;
  /** The mailbox of a string name, worked out once per name. */
  addressOf(name: string): KnownAddress;
  /** Marks `name` as seen now, if it is a joined agent. */
  touch(name: JsonValue | undefined): void;
  /** Records in the agent directory that `name` is attached through agent_sync (best effort). */
  attached(name: string): Promise<void>;
  /**
   * Enqueues one item to each target in order (a target listed twice receives it twice). Waiting
   * listens are served once the command has finished.
   */
  deliver(targets: readonly MailboxAddress[], item: MailItem, rendered: RenderedItem): Promise<void>;
  /** Enqueues the `phase_change` message of `change` to its recipients and publishes a team event. */
  announce(change: PhaseChange): Promise<void>;
}

/** One command: the parsed request in, the reply line (without `\n`) out. */
export type CommandHandler = (request: JsonObject, ctx: CommandContext) => Promise<string>;

/** What a command produced: a reply line (to commit `reservation` after writing it), or nothing. */
export type CommandOutcome =
  | { readonly kind: 'reply'; readonly text: string; readonly reservation: Reservation | null }
  | { readonly kind: 'cancelled' };

/** The request's value for `key`, or `fallback` when the key is absent (a present `null` stays `null`). */
export function valueOr(request: JsonObject, key: string, fallback: JsonValue): JsonValue {
  const value = request.get(key);
  return value === undefined ? fallback : value;
}
