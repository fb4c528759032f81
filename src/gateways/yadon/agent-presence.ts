import type { AgentDirectory, AgentUpdate } from '../../bus/agent-directory.js';
import type { Logger } from '../../core/logger.js';

/** What a yadon agent writes to the agent directory (the AgentDirectory satisfies it). */
export type YadonAgentDirectory = Pick<AgentDirectory, 'update'>;

/**
 * One yadon agent's entry in the agent directory, protocol `yadon`: idle once it serves, busy with
 * the task it runs (`currentTask` = the task id the wire knows), offline once it stopped. Reports are
 * written one after another in call order, so a quick busy → idle never lands as busy; best effort
 * (a failed write is logged).
 */
export class AgentPresence {
  readonly #directory: YadonAgentDirectory;
  readonly #agent: string;
  readonly #role: string;
  readonly #log: Logger;
  #written: Promise<void> = Promise.resolve();

  constructor(options: {
    readonly directory: YadonAgentDirectory;
    readonly agent: string;
    /** `manager` or `worker`. */
    readonly role: string;
    readonly logger: Logger;
  }) {
    this.#directory = options.directory;
    this.#agent = options.agent;
    this.#role = options.role;
    this.#log = options.logger;
  }

  /** The agent serves and waits for work. */
  ready(): void {
    this.#report({ state: 'idle', role: this.#role, currentTask: null });
  }

  /** The agent runs task `taskId`. */
  busy(taskId: string): void {
    this.#report({ state: 'busy', currentTask: taskId });
  }

  /** The agent finished its task. */
  idle(): void {
    this.#report({ state: 'idle', currentTask: null });
  }

  /** The agent stopped; resolves once every report so far is written (or failed). */
  offline(): Promise<void> {
    this.#report({ state: 'offline', currentTask: null });
    return this.#written;
  }

  #report(update: AgentUpdate): void {
    this.#written = this.#written.then(() =>
      this.#directory
        .update(this.#agent, { protocol: 'yadon', ...update })
        .then(() => undefined)
        .catch((err: unknown) => this.#log.warn({ err }, 'agent directory not updated')),
    );
  }
}
