import type { AgentRunner } from '../agents/agent-runner.js';
import type { AgentDirectory } from '../bus/agent-directory.js';
import type { Logger } from '../core/logger.js';

/** The parts a run has: the manager plans, workers implement, the resolver settles merge conflicts. */
export type RunRole = 'manager' | 'worker' | 'resolver';

/** Longest current-task line a member shows (the first line of its turn's prompt). */
const TASK_CHARS = 120;

/**
 * The name a member of run `runId` has in the agent directory and the turn log: `manager.<run>`,
 * `worker-<n>.<run>`, `resolver.<run>`. The run id in it keeps two runs of one store apart; the role
 * first reads well on a card. Always a valid mailbox name (run ids are musubi's own).
 */
export function memberName(runId: string, role: RunRole, n?: number): string {
  return `${role === 'worker' ? `worker-${n ?? 1}` : role}.${runId}`;
}

/** One member as {@link RunMembers} registers it. */
export interface RunMember {
  readonly name: string;
  readonly role: RunRole;
  readonly runner: AgentRunner;
  readonly model?: string;
}

/** Options of {@link RunMembers}. */
export interface RunMembersOptions {
  readonly directory: Pick<AgentDirectory, 'update' | 'remove'>;
  readonly runId: string;
  readonly team: string;
  readonly logger: Logger;
}

/**
 * A run's members in the agent directory while the run lives: each is listed (role, team, run,
 * backend, model) when the run starts, shown busy with its task while one of its turns runs and idle
 * between them, and taken out when the run ends (its turns stay in the turn log). The directory is
 * the dashboard's and `/api/agents`' view, so a run's team shows there like any other agents.
 * Directory writes never fail a turn: a failure is logged and the turn goes on.
 */
export class RunMembers {
  readonly #options: RunMembersOptions;
  readonly #names = new Set<string>();

  constructor(options: RunMembersOptions) {
    this.#options = options;
  }

  /** Lists `member` (idle) and resolves its runner, which reports each turn to the directory. */
  async join(member: RunMember): Promise<AgentRunner> {
    this.#names.add(member.name);
    await this.#update(member.name, {
      protocol: 'bus',
      state: 'idle',
      role: member.role,
      team: this.#options.team,
      run: this.#options.runId,
      backend: member.runner.backend,
      ...(member.model !== undefined && { model: member.model }),
    });
    return this.#reporting(member.name, member.runner);
  }

  /** Takes every member out of the directory. Idempotent; never rejects. */
  async leave(): Promise<void> {
    const names = [...this.#names];
    this.#names.clear();
    await Promise.all(
      names.map((name) =>
        this.#options.directory.remove(name).catch((err: unknown) => {
          this.#options.logger.warn(
            { err, agentId: name },
            'could not take a run member out of the directory',
          );
        }),
      ),
    );
  }

  #reporting(name: string, runner: AgentRunner): AgentRunner {
    return {
      backend: runner.backend,
      available: () => runner.available(),
      run: async (input) => {
        await this.#update(name, { state: 'busy', currentTask: this.#taskOf(input).slice(0, TASK_CHARS) });
        try {
          return await runner.run(input);
        } finally {
          await this.#update(name, { state: 'idle', currentTask: null });
        }
      },
    };
  }

  /** What a turn works on, as a card shows it: `implement-sub1`, `plan`, else its prompt's first line. */
  #taskOf(input: Parameters<AgentRunner['run']>[0]): string {
    const { label } = input;
    const subtask = label?.subtask?.replace(`${this.#options.runId}-`, '');
    return subtask ?? label?.phase ?? input.prompt.trim().split('\n', 1)[0] ?? '';
  }

  async #update(name: string, update: Parameters<AgentDirectory['update']>[1]): Promise<void> {
    await this.#options.directory.update(name, update).then(
      () => undefined,
      (err: unknown) => {
        this.#options.logger.warn({ err, agentId: name }, 'could not update a run member in the directory');
      },
    );
  }
}
