import type { AgentBackend, AgentRunner } from '../../agents/agent-runner.js';
import type { AgentDirectory, AgentUpdate } from '../../bus/agent-directory.js';
import type { Logger } from '../../core/logger.js';
import { DEMO_TEAM, type DemoMember } from './demo-config.js';
import { failFirstTurns, observeTurns, type TurnObserver } from './turn-hooks.js';

/** A fault the demo injects into one agent: its first `count` turns fail. */
export interface InjectedFault {
  readonly agent: string;
  readonly count: number;
  readonly reason: string;
}

/** Options of {@link createDemoDecorator}. */
export interface DemoDecoratorOptions {
  readonly logger: Logger;
  /** Progress observers by agent name. */
  readonly observers?: Readonly<Record<string, TurnObserver>>;
  readonly fault?: InjectedFault;
}

/**
 * Registers the demo team in the agent directory (protocol, role, backend, team `demo`), so the
 * dashboard shows every member whatever protocol it speaks. Resolves once every row is written.
 */
export async function registerDemoTeam(
  directory: Pick<AgentDirectory, 'update'>,
  backend: AgentBackend,
): Promise<void> {
  for (const member of DEMO_TEAM) {
    await directory.update(member.name, {
      protocol: member.protocol,
      role: member.role,
      team: 'demo',
      state: 'idle',
      backend: member.tier === undefined ? 'musubi demo' : backend,
    });
  }
}

/** The model tier of a demo agent's turns; RangeError for a member that runs no agent (the lead). */
export function demoTier(name: string): NonNullable<DemoMember['tier']> {
  const found = DEMO_TEAM.find((m) => m.name === name);
  if (found?.tier === undefined) throw new RangeError(`${name} is not an agent of the demo team`);
  return found.tier;
}

/**
 * What the demo adds to each member's runner from the hub's factory (which runs every member on the
 * chosen backend with its tier's model): the injected fault if it is this agent's, then the observers —
 * the agent directory (busy / idle / error) and the progress tracker.
 */
export function createDemoDecorator(
  options: DemoDecoratorOptions,
): (agent: string, runner: AgentRunner, directory: Pick<AgentDirectory, 'update'>) => AgentRunner {
  const log = options.logger.child({ component: 'demo.runners' });
  // One chain per agent: updates land in turn order, so a late `busy` never overwrites the final `idle`.
  const chains = new Map<string, Promise<void>>();
  return (agent, base, directory) => {
    const report = (update: AgentUpdate): void => {
      const next = (chains.get(agent) ?? Promise.resolve()).then(async () => {
        await directory.update(agent, update).catch((err: unknown) => {
          log.warn({ err, agentId: agent }, 'agent directory update failed');
        });
      });
      chains.set(agent, next);
    };
    const fault = options.fault;
    const runner = fault?.agent === agent ? failFirstTurns(base, fault.count, fault.reason) : base;
    const progress = options.observers?.[agent];
    return observeTurns(runner, {
      onStart: (input) => {
        report({ state: 'busy', currentTask: input.prompt.split('\n')[0]?.slice(0, 200) ?? '' });
        progress?.onStart?.(input);
      },
      onEnd: (input, result) => {
        const isFailed = result === undefined || result.isError;
        report({ state: isFailed ? 'error' : 'idle', currentTask: null });
        progress?.onEnd?.(input, result);
      },
    });
  };
}
